-- A company's events include its heartbeat runs starting and ending (issue 33). The activity row is
-- written by a trigger, inside the statement that moves the run, so every path that starts or ends a
-- run (runner claim, http adapter, finish, cancel, budget stop, timeout) logs it in the same
-- transaction, as every other control-plane change is. Details carry no error text (it can hold a
-- CLI's output): read the run for that.
CREATE TRIGGER `heartbeat_run_started_activity`
AFTER UPDATE OF `status` ON `heartbeat_runs`
WHEN OLD.`status` = 'queued' AND NEW.`status` = 'running'
BEGIN
	INSERT INTO `activity_log` (`seq`, `id`, `company_id`, `actor_type`, `actor_id`, `action`, `entity_type`, `entity_id`, `details`, `created_at`)
	VALUES (
		NULL,
		lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
		NEW.`company_id`, 'system', 'runner', 'heartbeat_run.started', 'heartbeat_run', NEW.`id`,
		json_object('agentId', NEW.`agent_id`, 'issueId', NEW.`issue_id`, 'invocationSource', NEW.`invocation_source`, 'status', NEW.`status`),
		COALESCE(NEW.`started_at`, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
	);
END;--> statement-breakpoint
CREATE TRIGGER `heartbeat_run_ended_activity`
AFTER UPDATE OF `status` ON `heartbeat_runs`
WHEN OLD.`status` IN ('queued', 'running') AND NEW.`status` IN ('succeeded', 'failed', 'cancelled', 'timed_out')
BEGIN
	INSERT INTO `activity_log` (`seq`, `id`, `company_id`, `actor_type`, `actor_id`, `action`, `entity_type`, `entity_id`, `details`, `created_at`)
	VALUES (
		NULL,
		lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
		NEW.`company_id`, 'system', 'runner', 'heartbeat_run.ended', 'heartbeat_run', NEW.`id`,
		json_object('agentId', NEW.`agent_id`, 'issueId', NEW.`issue_id`, 'status', NEW.`status`, 'previousStatus', OLD.`status`),
		COALESCE(NEW.`finished_at`, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
	);
END;
