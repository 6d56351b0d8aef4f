//! Forgejo and Gitea webhook deliveries: verified and parsed.
