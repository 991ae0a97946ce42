// swift-tools-version:6.0
import PackageDescription

// Layers (DESIGN §2): C bridges at the bottom, then HTTP / Postgres / AppStore, which know
// nothing of each other, then the domain (StorekeeperCore), the API and the workers over it,
// the app that composes them, and an executable that only dispatches.
let package = Package(
  name: "Storekeeper",
  products: [
    .executable(name: "storekeeper", targets: ["storekeeper"]),
    .executable(name: "storekeeper-fake-appstore", targets: ["storekeeper-fake-appstore"]),
    .executable(name: "storekeeper-fake-googleplay", targets: ["storekeeper-fake-googleplay"]),
  ],
  targets: [
    .target(name: "CSystem"),
    // The version and commit `scripts/release` stamps into a release ("unknown" otherwise).
    .target(name: "CBuildInfo"),
    .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
    .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
    .systemLibrary(
      name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    .target(name: "StorekeeperLogging"),
    .target(name: "TextSafety"),
    .target(name: "HTTP", dependencies: ["CSystem", "StorekeeperLogging", "TextSafety"]),
    // SHA-256, HMAC-SHA256 and constant-time comparison, once, for every layer above.
    .target(name: "Digest", dependencies: ["COpenSSL"]),
    .target(name: "Postgres", dependencies: ["CPostgres", "Digest", "StorekeeperLogging"]),
    // JWS encodings both JWT checkers need (Apple's signed data, the app's sign-in tokens).
    .target(name: "JOSE"),
    // The server's own requests to others through libcurl, with a kept deadline.
    .target(name: "OutboundHTTP", dependencies: ["CCurl"]),
    .target(
      name: "AppStore",
      dependencies: [
        "COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging", "TextSafety",
      ]),
    // Google Play's Developer API, its notifications and their push tokens: a peer of AppStore
    // (it knows neither HTTP, Postgres nor AppAuth).
    .target(
      name: "GooglePlay",
      dependencies: [
        "COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging", "TextSafety",
      ]),
    // Who the app's user is: JWT/JWKS and API-key checks, knowing neither HTTP nor Postgres.
    .target(
      name: "AppAuth",
      dependencies: [
        "COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging", "TextSafety",
      ]),
    // The domain: catalog, orders, settlement, ledger, entitlements, notifications' effects,
    // events, the webhook queue, reconciliation. No HTTP, no AppAuth, no C module.
    .target(
      name: "StorekeeperCore",
      dependencies: [
        "Postgres", "AppStore", "GooglePlay", "Digest", "StorekeeperLogging", "TextSafety",
      ]),
    // The HTTP API over the domain: routes, request decoding, problem mapping, authentication and
    // rate limits, the catalog's encoded bodies, metrics and readiness.
    .target(
      name: "StorekeeperAPI",
      dependencies: [
        "StorekeeperCore", "HTTP", "AppAuth", "Postgres", "AppStore", "Digest",
        "StorekeeperLogging", "CBuildInfo", "TextSafety",
      ]),
    // The background loops over the domain, each a `Service` started and stopped as a list.
    .target(
      name: "StorekeeperWorkers",
      dependencies: [
        "StorekeeperCore", "Postgres", "AppStore", "OutboundHTTP", "StorekeeperLogging",
      ]),
    // The app: configuration, and composition of the domain, the API and the workers.
    .target(
      name: "Storekeeper",
      dependencies: [
        "StorekeeperCore", "StorekeeperAPI", "StorekeeperWorkers", "HTTP", "Postgres", "AppStore",
        "GooglePlay", "AppAuth", "StorekeeperLogging",
      ]),
    .target(
      name: "FakeAppStore",
      dependencies: [
        "AppStore", "HTTP", "COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging",
      ]),
    .target(
      name: "FakeGooglePlay",
      dependencies: [
        "GooglePlay", "HTTP", "COpenSSL", "JOSE", "OutboundHTTP", "StorekeeperLogging",
      ]),
    .executableTarget(name: "storekeeper", dependencies: ["Storekeeper"]),
    // Apple's stand-in for tests and the demo, apart so the shipped binary carries no fake CA.
    .executableTarget(name: "storekeeper-fake-appstore", dependencies: ["FakeAppStore"]),
    // Google's stand-in, likewise apart from the shipped binary.
    .executableTarget(name: "storekeeper-fake-googleplay", dependencies: ["FakeGooglePlay"]),
    // A tiny server for bench/http (not shipped): the HTTP layer alone, against nginx.
    .executableTarget(
      name: "http-bench", dependencies: ["HTTP", "StorekeeperLogging"], path: "Sources/HTTPBench"),
    .executableTarget(
      name: "appstore-bench", dependencies: ["AppStore", "FakeAppStore"],
      path: "Sources/AppStoreBench"),
    .testTarget(name: "DigestTests", dependencies: ["Digest"]),
    .testTarget(name: "TextSafetyTests", dependencies: ["TextSafety"]),
    .testTarget(name: "HTTPTests", dependencies: ["HTTP", "CSystem", "StorekeeperLogging"]),
    .testTarget(
      name: "AppAuthTests", dependencies: ["AppAuth", "StorekeeperLogging"], exclude: ["Vectors"]),
    .testTarget(name: "PostgresTests", dependencies: ["Postgres", "Digest", "StorekeeperLogging"]),
    // Apple's stand-in on a loopback socket, for the fake's own tests and the AppStore clients'.
    .target(
      name: "FakeAppStoreTestSupport",
      dependencies: ["AppStore", "FakeAppStore", "HTTP", "StorekeeperLogging"],
      path: "Tests/FakeAppStoreTestSupport"),
    .testTarget(name: "OutboundHTTPTests", dependencies: ["OutboundHTTP"]),
    .testTarget(
      name: "AppStoreTests",
      dependencies: [
        "AppStore", "COpenSSL", "FakeAppStore", "FakeAppStoreTestSupport", "HTTP", "JOSE",
        "StorekeeperLogging",
      ]),
    .testTarget(
      name: "FakeAppStoreTests",
      dependencies: [
        "AppStore", "FakeAppStore", "FakeAppStoreTestSupport", "HTTP", "JOSE", "StorekeeperLogging",
      ]),
    // The domain wired as `Application` wires it, on a migrated database of its own.
    .target(
      name: "StorekeeperTestSupport",
      dependencies: [
        "StorekeeperCore", "FakeAppStore", "Postgres", "AppStore", "StorekeeperLogging",
      ],
      path: "Tests/StorekeeperTestSupport"),
    .testTarget(
      name: "StorekeeperCoreTests",
      dependencies: [
        "StorekeeperCore", "StorekeeperTestSupport", "FakeAppStore", "Postgres", "AppStore",
        "GooglePlay", "StorekeeperLogging",
      ]),
    .testTarget(
      name: "StorekeeperAPITests",
      dependencies: [
        "StorekeeperAPI", "StorekeeperCore", "StorekeeperTestSupport", "FakeAppStore", "HTTP",
        "Postgres", "AppStore", "AppAuth", "StorekeeperLogging",
      ]),
    .testTarget(
      name: "StorekeeperWorkersTests",
      dependencies: [
        "StorekeeperWorkers", "StorekeeperCore", "StorekeeperTestSupport", "FakeAppStore",
        "Postgres", "AppStore", "StorekeeperLogging",
      ]),
    .testTarget(
      name: "GooglePlayTests",
      dependencies: [
        "GooglePlay", "FakeGooglePlay", "HTTP", "COpenSSL", "JOSE", "OutboundHTTP",
        "StorekeeperLogging",
      ]),
    .testTarget(
      name: "StorekeeperTests",
      dependencies: [
        "Storekeeper", "StorekeeperAPI", "StorekeeperCore", "StorekeeperTestSupport", "HTTP",
        "Postgres", "AppStore", "AppAuth", "Digest", "StorekeeperLogging",
      ]),
  ],
  swiftLanguageModes: [.v6]
)

// Every Swift target spells its existentials `any P` (the upcoming Swift 7 rule).
for target in package.targets where target.type != .system {
  target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("ExistentialAny")]
}
