CREATE TABLE `line_answers` (
	`company_id` text NOT NULL,
	`wa_message_id` text NOT NULL,
	`notice_id` text,
	`phone` text NOT NULL,
	`outcome` text NOT NULL,
	`detail` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`company_id`, `wa_message_id`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`notice_id`) REFERENCES `line_notices`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
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
CREATE INDEX `line_members_user_idx` ON `line_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `line_notices` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`subject_type` text NOT NULL,
	`subject_id` text NOT NULL,
	`phone` text NOT NULL,
	`text` text NOT NULL,
	`poll_options` text,
	`status` text DEFAULT 'queued' NOT NULL,
	`not_before` integer NOT NULL,
	`wa_message_id` text,
	`error` text,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `line_notices_once_uq` ON `line_notices` (`user_id`,`subject_type`,`subject_id`,`kind`);--> statement-breakpoint
CREATE UNIQUE INDEX `line_notices_wa_message_uq` ON `line_notices` (`company_id`,`wa_message_id`);--> statement-breakpoint
CREATE INDEX `line_notices_queue_idx` ON `line_notices` (`company_id`,`status`,`created_at`);