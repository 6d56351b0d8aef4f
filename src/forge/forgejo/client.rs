//! The Forgejo/Gitea REST v1 client.
