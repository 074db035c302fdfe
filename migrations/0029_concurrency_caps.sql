ALTER TABLE `companies` ADD `max_concurrent_runs` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `max_concurrent_runs` integer;