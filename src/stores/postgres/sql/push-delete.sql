-- push-delete: topic $1's push subscription removed; answers it if there was one.
DELETE FROM S.push_subscriptions WHERE topic = $1 RETURNING topic
