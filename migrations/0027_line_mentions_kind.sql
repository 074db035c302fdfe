PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_line_members` (
	`company_id` text NOT NULL,
	`user_id` text NOT NULL,
	`phone` text NOT NULL,
	`verified_at` integer,
	`code_hash` text,
	`code_expires_at` integer,
	`code_attempts` integer DEFAULT 0 NOT NULL,
	`code_sent_at` integer,
	`notify` text DEFAULT '["approvals","questions","budget","failed_runs","digest","mentions"]' NOT NULL,
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
INSERT INTO `__new_line_members`("company_id", "user_id", "phone", "verified_at", "code_hash", "code_expires_at", "code_attempts", "code_sent_at", "notify", "quiet_start_minute", "quiet_end_minute", "time_zone", "created_at", "updated_at") SELECT "company_id", "user_id", "phone", "verified_at", "code_hash", "code_expires_at", "code_attempts", "code_sent_at", "notify", "quiet_start_minute", "quiet_end_minute", "time_zone", "created_at", "updated_at" FROM `line_members`;--> statement-breakpoint
DROP TABLE `line_members`;--> statement-breakpoint
ALTER TABLE `__new_line_members` RENAME TO `line_members`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `line_members_verified_phone_uq` ON `line_members` (`company_id`,`phone`) WHERE verified_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `line_members_user_idx` ON `line_members` (`user_id`);--> statement-breakpoint
-- Members who still receive every kind the line had (the default) get mentions too; a member who
-- switched any kind off made a choice, and keeps exactly what they chose (docs/decisions.md).
UPDATE `line_members` SET `notify` = json_insert(`notify`, '$[#]', 'mentions')
WHERE (SELECT count(DISTINCT value) FROM json_each(`line_members`.`notify`)
       WHERE value IN ('approvals', 'questions', 'budget', 'failed_runs', 'digest')) = 5;
