-- push-put: topic $1's push subscription set to $2 (its JSON) at $3.
INSERT INTO S.push_subscriptions (topic, subscription, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (topic) DO UPDATE SET subscription = excluded.subscription, updated_at = excluded.updated_at
