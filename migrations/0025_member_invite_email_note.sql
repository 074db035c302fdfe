ALTER TABLE `member_invites` ADD `email` text;--> statement-breakpoint
ALTER TABLE `member_invites` ADD `note` text;