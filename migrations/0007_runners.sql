CREATE TABLE `runner_companies` (
	`runner_id` text NOT NULL,
	`company_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`runner_id`, `company_id`),
	FOREIGN KEY (`runner_id`) REFERENCES `runners`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runner_companies_company_idx` ON `runner_companies` (`company_id`);--> statement-breakpoint
CREATE TABLE `runners` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_user_id` text NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`all_companies` integer DEFAULT false NOT NULL,
	`capabilities` text,
	`version` text,
	`connected_at` integer,
	`last_seen_at` integer,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`owner_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runners_token_hash_unique` ON `runners` (`token_hash`);--> statement-breakpoint
CREATE INDEX `runners_owner_idx` ON `runners` (`owner_user_id`);--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `runner_link_id` text;--> statement-breakpoint
ALTER TABLE `heartbeat_runs` ADD `cancel_requested_at` integer;--> statement-breakpoint
-- A paused or archived company starts no runs, whichever code path queued the wake or moved the
-- company: a wake queued for it is recorded as cancelled with the reason, and its queued runs are
-- cancelled when it stops being active (docs/decisions.md, "Agent runs belong to their company").
CREATE TRIGGER `heartbeat_runs_company_inactive` AFTER INSERT ON `heartbeat_runs`
WHEN new.`status` = 'queued' AND (SELECT `status` FROM `companies` WHERE `id` = new.`company_id`) <> 'active'
BEGIN
  UPDATE `heartbeat_runs`
  SET `status` = 'cancelled',
      `error_reason` = 'company_' || (SELECT `status` FROM `companies` WHERE `id` = new.`company_id`),
      `finished_at` = new.`created_at`
  WHERE `id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_inactive_cancel_queued_runs` AFTER UPDATE OF `status` ON `companies`
WHEN new.`status` <> 'active'
BEGIN
  UPDATE `heartbeat_runs`
  SET `status` = 'cancelled', `error_reason` = 'company_' || new.`status`, `finished_at` = new.`updated_at`
  WHERE `company_id` = new.`id` AND `status` = 'queued';
END;
