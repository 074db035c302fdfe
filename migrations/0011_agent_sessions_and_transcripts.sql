CREATE TABLE `agent_task_sessions` (
	`company_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`issue_id` text NOT NULL,
	`adapter_type` text NOT NULL,
	`session_id` text NOT NULL,
	`cwd` text NOT NULL,
	`run_id` text,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_task_sessions_pk` ON `agent_task_sessions` (`agent_id`,`issue_id`,`adapter_type`);--> statement-breakpoint
CREATE TABLE `heartbeat_run_events` (
	`run_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `heartbeat_runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `heartbeat_run_events_pk` ON `heartbeat_run_events` (`run_id`,`seq`);