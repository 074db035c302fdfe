CREATE TABLE `issue_blockers` (
	`issue_id` text NOT NULL,
	`blocker_issue_id` text NOT NULL,
	`company_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`issue_id`, `blocker_issue_id`),
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`blocker_issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_blockers_blocker_idx` ON `issue_blockers` (`blocker_issue_id`);