CREATE TABLE `bot_configs` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`enabled` integer NOT NULL,
	`bot_mode` text NOT NULL,
	`bot_allowed_jids` text NOT NULL,
	`bot_blocked_jids` text NOT NULL,
	`auto_reply_mode` text NOT NULL,
	`auto_reply_allowed_jids` text NOT NULL,
	`auto_reply_blocked_jids` text NOT NULL,
	`bot_name` text NOT NULL,
	`prefix` text NOT NULL,
	`enable_sticker` integer NOT NULL,
	`enable_video_sticker` integer NOT NULL,
	`max_sticker_duration` integer NOT NULL,
	`enable_ping` integer NOT NULL,
	`enable_uptime` integer NOT NULL,
	`remove_bg_api_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bot_configs_session_id_unique` ON `bot_configs` (`session_id`);--> statement-breakpoint
CREATE TABLE `session_access` (
	`session_id` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `user_id`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `session_access_user_idx` ON `session_access` (`user_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`name` text NOT NULL,
	`user_id` text NOT NULL,
	`status` text NOT NULL,
	`state` text NOT NULL,
	`me` text,
	`config` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_session_id_unique` ON `sessions` (`session_id`);--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);