CREATE TABLE `activity_log` (
	`id` text PRIMARY KEY NOT NULL,
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
CREATE INDEX `activity_log_company_idx` ON `activity_log` (`company_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `activity_log_entity_idx` ON `activity_log` (`entity_type`,`entity_id`);--> statement-breakpoint
CREATE TABLE `agent_api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`display_prefix` text NOT NULL,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`last_used_at` integer,
	`revoked_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_api_keys_key_hash_unique` ON `agent_api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `agent_api_keys_agent_idx` ON `agent_api_keys` (`agent_id`);--> statement-breakpoint
CREATE TABLE `agent_config_revisions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`source` text NOT NULL,
	`changed_keys` text NOT NULL,
	`before_config` text NOT NULL,
	`after_config` text NOT NULL,
	`rolled_back_from_revision_id` text,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `agent_config_revisions_agent_idx` ON `agent_config_revisions` (`agent_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`role` text NOT NULL,
	`title` text,
	`icon` text,
	`status` text NOT NULL,
	`pause_reason` text,
	`reports_to` text,
	`capabilities` text,
	`adapter_type` text NOT NULL,
	`adapter_config` text NOT NULL,
	`runtime_config` text NOT NULL,
	`desired_skills` text NOT NULL,
	`budget_monthly_cents` integer DEFAULT 0 NOT NULL,
	`spent_monthly_cents` integer DEFAULT 0 NOT NULL,
	`source_issue_id` text,
	`source_issue_ids` text NOT NULL,
	`last_heartbeat_at` integer,
	`terminated_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `agents_company_idx` ON `agents` (`company_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `agents_company_name_key_uq` ON `agents` (`company_id`,`name_key`);--> statement-breakpoint
CREATE INDEX `agents_reports_to_idx` ON `agents` (`reports_to`);--> statement-breakpoint
CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`payload` text NOT NULL,
	`requested_by_agent_id` text,
	`requested_by_user_id` text,
	`decision_note` text,
	`decided_by_user_id` text,
	`decided_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `approvals_company_status_idx` ON `approvals` (`company_id`,`status`);--> statement-breakpoint
CREATE TABLE `companies` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` text NOT NULL,
	`issue_prefix` text NOT NULL,
	`issue_counter` integer DEFAULT 0 NOT NULL,
	`brand_color` text,
	`logo_asset_id` text,
	`budget_monthly_cents` integer DEFAULT 0 NOT NULL,
	`spent_monthly_cents` integer DEFAULT 0 NOT NULL,
	`require_board_approval_for_new_agents` integer DEFAULT true NOT NULL,
	`archived_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `companies_issue_prefix_unique` ON `companies` (`issue_prefix`);--> statement-breakpoint
CREATE TABLE `company_assets` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`kind` text NOT NULL,
	`content_type` text NOT NULL,
	`byte_size` integer NOT NULL,
	`r2_key` text NOT NULL,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `company_assets_company_idx` ON `company_assets` (`company_id`);--> statement-breakpoint
CREATE TABLE `company_memberships` (
	`company_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`company_id`, `user_id`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `company_memberships_user_idx` ON `company_memberships` (`user_id`);--> statement-breakpoint
CREATE TABLE `company_skills` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`key` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`content` text,
	`source` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `company_skills_company_key_uq` ON `company_skills` (`company_id`,`key`);--> statement-breakpoint
CREATE INDEX `company_skills_company_slug_idx` ON `company_skills` (`company_id`,`slug`);--> statement-breakpoint
CREATE TABLE `goals` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`level` text NOT NULL,
	`status` text NOT NULL,
	`parent_id` text,
	`owner_agent_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `goals_company_idx` ON `goals` (`company_id`);--> statement-breakpoint
CREATE TABLE `heartbeat_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`status` text NOT NULL,
	`invocation_source` text NOT NULL,
	`wake_reason` text NOT NULL,
	`issue_id` text,
	`comment_id` text,
	`requested_by_user_id` text,
	`requested_by_agent_id` text,
	`error_reason` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `heartbeat_runs_agent_idx` ON `heartbeat_runs` (`agent_id`,`status`);--> statement-breakpoint
CREATE INDEX `heartbeat_runs_company_idx` ON `heartbeat_runs` (`company_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `issue_approvals` (
	`issue_id` text NOT NULL,
	`approval_id` text NOT NULL,
	`company_id` text NOT NULL,
	`linked_by_user_id` text,
	`linked_by_agent_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`issue_id`, `approval_id`),
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`approval_id`) REFERENCES `approvals`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_approvals_approval_idx` ON `issue_approvals` (`approval_id`);--> statement-breakpoint
CREATE TABLE `issue_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`issue_id` text NOT NULL,
	`author_agent_id` text,
	`author_user_id` text,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_comments_issue_idx` ON `issue_comments` (`issue_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `issue_comments_author_user_idx` ON `issue_comments` (`author_user_id`,`issue_id`);--> statement-breakpoint
CREATE TABLE `issue_document_revisions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`document_id` text NOT NULL,
	`issue_id` text NOT NULL,
	`revision_number` integer NOT NULL,
	`title` text,
	`body` text NOT NULL,
	`change_summary` text,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issue_document_revisions_doc_number_uq` ON `issue_document_revisions` (`document_id`,`revision_number`);--> statement-breakpoint
CREATE TABLE `issue_documents` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`issue_id` text NOT NULL,
	`key` text NOT NULL,
	`title` text,
	`format` text NOT NULL,
	`latest_body` text NOT NULL,
	`latest_revision_id` text NOT NULL,
	`latest_revision_number` integer NOT NULL,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issue_documents_issue_key_uq` ON `issue_documents` (`issue_id`,`key`);--> statement-breakpoint
CREATE TABLE `issue_labels` (
	`issue_id` text NOT NULL,
	`label_id` text NOT NULL,
	`company_id` text NOT NULL,
	PRIMARY KEY(`issue_id`, `label_id`),
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`label_id`) REFERENCES `labels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_labels_label_idx` ON `issue_labels` (`label_id`);--> statement-breakpoint
CREATE TABLE `issue_read_states` (
	`issue_id` text NOT NULL,
	`user_id` text NOT NULL,
	`company_id` text NOT NULL,
	`last_read_at` integer NOT NULL,
	PRIMARY KEY(`issue_id`, `user_id`),
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `issues` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`project_id` text,
	`goal_id` text,
	`parent_id` text,
	`issue_number` integer NOT NULL,
	`identifier` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`status` text NOT NULL,
	`priority` text NOT NULL,
	`priority_rank` integer NOT NULL,
	`assignee_agent_id` text,
	`assignee_user_id` text,
	`created_by_user_id` text,
	`created_by_agent_id` text,
	`started_at` integer,
	`completed_at` integer,
	`cancelled_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issues_identifier_unique` ON `issues` (`identifier`);--> statement-breakpoint
CREATE INDEX `issues_company_priority_idx` ON `issues` (`company_id`,`priority_rank`,`created_at`);--> statement-breakpoint
CREATE INDEX `issues_company_status_idx` ON `issues` (`company_id`,`status`);--> statement-breakpoint
CREATE INDEX `issues_assignee_agent_idx` ON `issues` (`assignee_agent_id`,`status`);--> statement-breakpoint
CREATE INDEX `issues_assignee_user_idx` ON `issues` (`assignee_user_id`);--> statement-breakpoint
CREATE INDEX `issues_parent_idx` ON `issues` (`parent_id`);--> statement-breakpoint
CREATE INDEX `issues_project_idx` ON `issues` (`project_id`);--> statement-breakpoint
CREATE TABLE `labels` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`color` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `labels_company_name_uq` ON `labels` (`company_id`,`name`);--> statement-breakpoint
CREATE TABLE `project_goals` (
	`project_id` text NOT NULL,
	`goal_id` text NOT NULL,
	`company_id` text NOT NULL,
	PRIMARY KEY(`project_id`, `goal_id`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`goal_id`) REFERENCES `goals`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `project_workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`cwd` text,
	`repo_url` text,
	`repo_ref` text,
	`is_primary` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_workspaces_project_idx` ON `project_workspaces` (`project_id`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` text NOT NULL,
	`goal_id` text,
	`lead_agent_id` text,
	`archived_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `projects_company_idx` ON `projects` (`company_id`);--> statement-breakpoint
-- Full-text search over issues (identifier, title, description) and their comments: one row per issue
-- and one per comment, kept current by triggers. Rows are found by source_id, which FTS cannot index:
-- a title/description edit scans the search table. Such edits are rare (status moves do not fire the
-- trigger); rowid-derived keys would avoid the scan but break if SQLite ever renumbers rowids.
CREATE VIRTUAL TABLE `issue_search` USING fts5(`issue_id` UNINDEXED, `company_id` UNINDEXED, `source_id` UNINDEXED, `body`, tokenize = 'unicode61');
--> statement-breakpoint
CREATE TRIGGER `issues_search_insert` AFTER INSERT ON `issues` BEGIN
  INSERT INTO `issue_search` (`issue_id`, `company_id`, `source_id`, `body`)
  VALUES (new.`id`, new.`company_id`, new.`id`, new.`identifier` || ' ' || new.`title` || ' ' || coalesce(new.`description`, ''));
END;
--> statement-breakpoint
CREATE TRIGGER `issues_search_update` AFTER UPDATE OF `title`, `description`, `identifier` ON `issues` BEGIN
  DELETE FROM `issue_search` WHERE `source_id` = old.`id`;
  INSERT INTO `issue_search` (`issue_id`, `company_id`, `source_id`, `body`)
  VALUES (new.`id`, new.`company_id`, new.`id`, new.`identifier` || ' ' || new.`title` || ' ' || coalesce(new.`description`, ''));
END;
--> statement-breakpoint
CREATE TRIGGER `issues_search_delete` AFTER DELETE ON `issues` BEGIN
  DELETE FROM `issue_search` WHERE `issue_id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `issue_comments_search_insert` AFTER INSERT ON `issue_comments` BEGIN
  INSERT INTO `issue_search` (`issue_id`, `company_id`, `source_id`, `body`)
  VALUES (new.`issue_id`, new.`company_id`, new.`id`, new.`body`);
END;
--> statement-breakpoint
CREATE TRIGGER `issue_comments_search_update` AFTER UPDATE OF `body` ON `issue_comments` BEGIN
  DELETE FROM `issue_search` WHERE `source_id` = old.`id`;
  INSERT INTO `issue_search` (`issue_id`, `company_id`, `source_id`, `body`)
  VALUES (new.`issue_id`, new.`company_id`, new.`id`, new.`body`);
END;
--> statement-breakpoint
CREATE TRIGGER `issue_comments_search_delete` AFTER DELETE ON `issue_comments` BEGIN
  DELETE FROM `issue_search` WHERE `source_id` = old.`id`;
END;
