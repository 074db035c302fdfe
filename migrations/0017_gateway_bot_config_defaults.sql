-- Sessions created before their default bot configuration was stored get it now (values as in
-- BOT_CONFIG_DEFAULTS, durable-objects/messaging/config/bot.ts), so every session's botConfig is a
-- complete stored row. Sessions that already have one are left alone.
INSERT INTO `bot_configs` (`id`, `session_id`, `enabled`, `bot_mode`, `bot_allowed_jids`, `bot_blocked_jids`, `auto_reply_mode`, `auto_reply_allowed_jids`, `auto_reply_blocked_jids`, `bot_name`, `prefix`, `enable_sticker`, `enable_video_sticker`, `max_sticker_duration`, `enable_ping`, `enable_uptime`, `remove_bg_api_key`, `created_at`, `updated_at`)
SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))), `id`, 1, 'OWNER', '[]', '[]', 'ALL', '[]', '[]', 'Switchboard Bot', '#', 1, 1, 10, 1, 1, NULL, `created_at`, `created_at`
FROM `sessions`
WHERE `id` NOT IN (SELECT `session_id` FROM `bot_configs`);
