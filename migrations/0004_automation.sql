CREATE TABLE `company_secret_versions` (
	`secret_id` text NOT NULL,
	`version` integer NOT NULL,
	`ciphertext` text NOT NULL,
	`value_sha256` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`secret_id`) REFERENCES `company_secrets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `company_secret_versions_pk` ON `company_secret_versions` (`secret_id`,`version`);--> statement-breakpoint
CREATE TABLE `company_secrets` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`key` text NOT NULL,
	`description` text,
	`latest_version` integer NOT NULL,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `company_secrets_key_uq` ON `company_secrets` (`company_id`,`key`);--> statement-breakpoint
CREATE TABLE `cost_events` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`issue_id` text,
	`project_id` text,
	`heartbeat_run_id` text,
	`provider` text NOT NULL,
	`model` text,
	`billing_type` text NOT NULL,
	`input_tokens` integer NOT NULL,
	`cached_input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cost_cents` integer NOT NULL,
	`occurred_at` integer NOT NULL,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `cost_events_company_idx` ON `cost_events` (`company_id`,`occurred_at`);--> statement-breakpoint
CREATE INDEX `cost_events_agent_idx` ON `cost_events` (`agent_id`,`occurred_at`);--> statement-breakpoint
CREATE INDEX `cost_events_project_idx` ON `cost_events` (`project_id`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `heartbeat_run_log_chunks` (
	`run_id` text NOT NULL,
	`seq` integer NOT NULL,
	`stream` text NOT NULL,
	`text` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `heartbeat_runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `heartbeat_run_log_chunks_pk` ON `heartbeat_run_log_chunks` (`run_id`,`seq`);--> statement-breakpoint
CREATE TABLE `invite_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invite_tokens_token_hash_unique` ON `invite_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `invite_tokens_company_idx` ON `invite_tokens` (`company_id`);--> statement-breakpoint
CREATE TABLE `routine_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`routine_id` text NOT NULL,
	`trigger_id` text,
	`source` text NOT NULL,
	`status` text NOT NULL,
	`issue_id` text,
	`heartbeat_run_id` text,
	`scheduled_for` integer,
	`payload` text,
	`reason` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`routine_id`) REFERENCES `routines`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `routine_runs_routine_idx` ON `routine_runs` (`routine_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `routine_runs_due_minute_uq` ON `routine_runs` (`trigger_id`,`scheduled_for`);--> statement-breakpoint
CREATE TABLE `routine_trigger_replays` (
	`trigger_id` text NOT NULL,
	`signature` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`trigger_id`) REFERENCES `routine_triggers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `routine_trigger_replays_pk` ON `routine_trigger_replays` (`trigger_id`,`signature`);--> statement-breakpoint
CREATE TABLE `routine_triggers` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`routine_id` text NOT NULL,
	`kind` text NOT NULL,
	`label` text,
	`enabled` integer NOT NULL,
	`cron_expression` text,
	`timezone` text,
	`next_run_at` integer,
	`last_fired_at` integer,
	`public_id` text,
	`secret_ciphertext` text,
	`replay_window_sec` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`routine_id`) REFERENCES `routines`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `routine_triggers_public_id_unique` ON `routine_triggers` (`public_id`);--> statement-breakpoint
CREATE INDEX `routine_triggers_routine_idx` ON `routine_triggers` (`routine_id`);--> statement-breakpoint
CREATE INDEX `routine_triggers_due_idx` ON `routine_triggers` (`kind`,`enabled`,`next_run_at`);--> statement-breakpoint
CREATE TABLE `routines` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`assignee_agent_id` text NOT NULL,
	`project_id` text NOT NULL,
	`priority` text NOT NULL,
	`status` text NOT NULL,
	`concurrency_policy` text NOT NULL,
	`catch_up_policy` text NOT NULL,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`assignee_agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `routines_company_idx` ON `routines` (`company_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `approval_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`approval_id` text NOT NULL,
	`author_agent_id` text,
	`author_user_id` text,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`approval_id`) REFERENCES `approvals`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `approval_comments_approval_idx` ON `approval_comments` (`approval_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `agent_api_keys` ADD `run_id` text;--> statement-breakpoint
CREATE INDEX `agent_api_keys_run_idx` ON `agent_api_keys` (`run_id`);--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `approval_id` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `approval_status` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `routine_run_id` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `coalesced_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `runner_id` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `heartbeat_at` integer;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `exit_code` integer;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `log_excerpt` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `usage` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `cost_cents` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `heartbeat_runs_status_idx` ON `heartbeat_runs` (`status`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `heartbeat_runs_one_queued_uq` ON `heartbeat_runs` (`agent_id`,`issue_id`) WHERE status = 'queued';--> statement-breakpoint
ALTER TABLE `issues` ADD `checkout_run_id` text;--> statement-breakpoint
ALTER TABLE `issues` ADD `origin_routine_id` text;--> statement-breakpoint
CREATE INDEX `issues_checkout_run_idx` ON `issues` (`checkout_run_id`);--> statement-breakpoint
CREATE INDEX `issues_origin_routine_idx` ON `issues` (`origin_routine_id`,`status`);