CREATE TABLE `issue_questions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`issue_id` text NOT NULL,
	`body` text NOT NULL,
	`asked_by_agent_id` text,
	`asked_by_user_id` text,
	`answer` text,
	`answered_by_agent_id` text,
	`answered_by_user_id` text,
	`answered_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_questions_issue_idx` ON `issue_questions` (`issue_id`,`created_at`);