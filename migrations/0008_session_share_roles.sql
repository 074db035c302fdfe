PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_session_access` (
	`session_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text DEFAULT 'operator' NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `email`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Shares become by e-mail (sharing must not reveal whether an account exists); existing grants keep
-- what they allowed (everything but sharing, deleting and logging out): the operator role.
INSERT INTO `__new_session_access`("session_id", "email", "role", "created_at")
SELECT a."session_id", u."email", 'operator', a."created_at" FROM `session_access` a JOIN `users` u ON u."id" = a."user_id";--> statement-breakpoint
DROP TABLE `session_access`;--> statement-breakpoint
ALTER TABLE `__new_session_access` RENAME TO `session_access`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `session_access_email_idx` ON `session_access` (`email`);--> statement-breakpoint
ALTER TABLE `webhooks` ADD `created_by_user_id` text;--> statement-breakpoint
-- Webhooks made before this knew no creator; their owner is the best guess.
UPDATE `webhooks` SET `created_by_user_id` = `user_id` WHERE `created_by_user_id` IS NULL;
