-- The activity log gains `seq` (issue 33: the company's events from a cursor): existing rows keep their
-- rowid, so their order is the order they were written in.
CREATE TABLE `event_log_horizons` (
	`log` text PRIMARY KEY NOT NULL,
	`pruned_through_seq` integer NOT NULL
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_activity_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`company_id` text NOT NULL,
	`actor_type` text NOT NULL,
	`actor_id` text NOT NULL,
	`action` text NOT NULL,
	`entity_type` text NOT NULL,
	`entity_id` text NOT NULL,
	`details` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_activity_log`("seq", "id", "company_id", "actor_type", "actor_id", "action", "entity_type", "entity_id", "details", "created_at") SELECT rowid, "id", "company_id", "actor_type", "actor_id", "action", "entity_type", "entity_id", "details", "created_at" FROM `activity_log` ORDER BY rowid;--> statement-breakpoint
DROP TABLE `activity_log`;--> statement-breakpoint
ALTER TABLE `__new_activity_log` RENAME TO `activity_log`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `activity_log_id_unique` ON `activity_log` (`id`);--> statement-breakpoint
CREATE INDEX `activity_log_company_idx` ON `activity_log` (`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `activity_log_entity_idx` ON `activity_log` (`entity_type`,`entity_id`);--> statement-breakpoint
CREATE INDEX `activity_log_company_seq_idx` ON `activity_log` (`company_id`,`seq`);