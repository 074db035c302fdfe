ALTER TABLE `heartbeat_runs` ADD `session_id` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `session_resumed` integer DEFAULT false NOT NULL;