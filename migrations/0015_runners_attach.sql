-- Who created each company: a runner registered with `allCompanies` serves the companies its owner
-- created (and creates later), never ones its owner joined by invite (issue 25, H-a).
ALTER TABLE `companies` ADD `created_by_user_id` text REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null;
--> statement-breakpoint
-- Companies made before this column existed: the user of their `company.created` activity row.
UPDATE `companies` SET `created_by_user_id` = (
	SELECT `a`.`actor_id` FROM `activity_log` `a`
	WHERE `a`.`company_id` = `companies`.`id` AND `a`.`entity_type` = 'company' AND `a`.`entity_id` = `companies`.`id`
	  AND `a`.`action` = 'company.created' AND `a`.`actor_type` = 'user'
	  AND `a`.`actor_id` IN (SELECT `id` FROM `users`)
	ORDER BY `a`.`created_at` LIMIT 1
);
--> statement-breakpoint
-- Runners registered with `allCompanies` served every company their owner owned, joined ones too; they
-- now list companies by id: those their owner created and still owns. Joined ones need an explicit attach.
INSERT OR IGNORE INTO `runner_companies` (`runner_id`, `company_id`, `created_at`)
SELECT `r`.`id`, `c`.`id`, CAST(unixepoch('subsec') * 1000 AS INTEGER)
FROM `runners` `r`
JOIN `companies` `c` ON `c`.`created_by_user_id` = `r`.`owner_user_id`
JOIN `company_memberships` `m` ON `m`.`company_id` = `c`.`id` AND `m`.`user_id` = `r`.`owner_user_id` AND `m`.`role` = 'owner'
WHERE `r`.`all_companies` = 1 AND `r`.`revoked_at` IS NULL;
