CREATE TABLE `scoped_api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`display_prefix` text NOT NULL,
	`last4` text NOT NULL,
	`scopes` text NOT NULL,
	`session_id` text,
	`company_id` text,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scoped_api_keys_key_hash_unique` ON `scoped_api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `scoped_api_keys_user_idx` ON `scoped_api_keys` (`user_id`);