//! The Docker backend against the same conformance suite as bubblewrap, in the sandbox base
//! image built on the local base `tests/setup/docker.sh` makes. What only Docker does (images,
//! reaping a crashed bot's containers) is tested in `sandbox_docker`.

use forgeward::sandbox::{Docker, Images};

use super::conformance::sandbox_conformance;

/// The sandbox base image's ID, built on `FORGEWARD_TEST_DOCKER_BASE` if needed.
async fn sandbox_image() -> Option<String> {
    let base = std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)")
    });
    let id = Images::new(base)
        .sandbox_image()
        .await
        .unwrap_or_else(|e| panic!("building the sandbox image: {e}"));
    Some(id)
}

sandbox_conformance!(
    conformance,
    Docker::new("forgeward-test-conformance"),
    sandbox_image().await
);

// The whole suite again with the egress gateway as the worker's way out.
sandbox_conformance!(
    conformance_gateway,
    Docker::new("forgeward-test-conformance-gateway"),
    sandbox_image().await,
    true
);

/// The gateway's own behaviour (it turns the gateway on whatever the setup says), once.
#[tokio::test]
async fn the_gateway_is_the_only_way_out() {
    let backend = Docker::new("forgeward-test-gateway");
    super::conformance::the_gateway_is_the_only_way_out(
        &backend,
        super::harness::Setup {
            image: sandbox_image().await,
            gateway: true,
        },
    )
    .await;
}
