CREATE TABLE `line_members` (
	`company_id` text NOT NULL,
	`user_id` text NOT NULL,
	`phone` text NOT NULL,
	`verified_at` integer,
	`code_hash` text,
	`code_expires_at` integer,
	`code_attempts` integer DEFAULT 0 NOT NULL,
	`code_sent_at` integer,
	`notify` text DEFAULT '["approvals","questions","budget","failed_runs","digest"]' NOT NULL,
	`quiet_start_minute` integer,
	`quiet_end_minute` integer,
	`time_zone` text DEFAULT 'UTC' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`company_id`, `user_id`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `line_members_verified_phone_uq` ON `line_members` (`company_id`,`phone`) WHERE verified_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `line_members_user_idx` ON `line_members` (`user_id`);