CREATE TABLE `budget_incidents` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`scope_type` text NOT NULL,
	`scope_id` text NOT NULL,
	`window` text NOT NULL,
	`window_start` integer NOT NULL,
	`threshold` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`spent_cents` integer NOT NULL,
	`cost_event_id` text,
	`status` text NOT NULL,
	`resolution` text,
	`resolved_by_user_id` text,
	`resolved_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `budget_incidents_crossing_uq` ON `budget_incidents` (`company_id`,`scope_type`,`scope_id`,`window`,`window_start`,`threshold`,`amount_cents`);--> statement-breakpoint
CREATE INDEX `budget_incidents_open_idx` ON `budget_incidents` (`company_id`,`status`,`threshold`);--> statement-breakpoint
CREATE TABLE `budget_policies` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`scope_type` text NOT NULL,
	`scope_id` text NOT NULL,
	`window` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `budget_policies_scope_uq` ON `budget_policies` (`company_id`,`scope_type`,`scope_id`,`window`);