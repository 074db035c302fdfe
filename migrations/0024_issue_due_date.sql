ALTER TABLE `issues` ADD `due_date` text;--> statement-breakpoint
CREATE INDEX `issues_company_due_idx` ON `issues` (`company_id`,`due_date`);