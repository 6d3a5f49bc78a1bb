-- A finished response's tool outputs are now deleted when it finishes (they only let a turn resumed
-- after a restart reuse what its tools returned); drop those kept by earlier versions.
DELETE FROM `response_tool_outputs` WHERE `response_id` IN (SELECT `id` FROM `responses` WHERE `finished_at` IS NOT NULL);
