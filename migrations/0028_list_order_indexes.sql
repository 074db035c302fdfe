DROP INDEX `activity_log_company_idx`;--> statement-breakpoint
CREATE INDEX `activity_log_company_idx` ON `activity_log` (`company_id`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `heartbeat_runs_company_idx`;--> statement-breakpoint
CREATE INDEX `heartbeat_runs_company_idx` ON `heartbeat_runs` (`company_id`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `issues_company_priority_idx`;--> statement-breakpoint
DROP INDEX `issues_company_status_idx`;--> statement-breakpoint
DROP INDEX `issues_project_idx`;--> statement-breakpoint
CREATE INDEX `issues_company_priority_idx` ON `issues` (`company_id`,`priority_rank`,`created_at`,`issue_number`);--> statement-breakpoint
CREATE INDEX `issues_company_status_idx` ON `issues` (`company_id`,`status`,`priority_rank`,`created_at`,`issue_number`);--> statement-breakpoint
CREATE INDEX `issues_project_idx` ON `issues` (`project_id`,`priority_rank`,`created_at`,`issue_number`);