CREATE TABLE `line_origins` (
	`company_id` text PRIMARY KEY NOT NULL,
	`origin` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
