// swift-tools-version:6.0
import PackageDescription

// Layers (DESIGN §2): C bridges at the bottom, then HTTP / Postgres / AppStore, which know
// nothing of each other, then the domain, then an executable that only wires.
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
    .target(name: "StorekeeperLogging"),
    .target(name: "HTTP", dependencies: ["CSystem", "StorekeeperLogging"]),
    // SHA-256, HMAC-SHA256 and constant-time comparison, once, for every layer above.
    .target(name: "Digest", dependencies: ["COpenSSL"]),
    .target(name: "Postgres", dependencies: ["CPostgres", "Digest", "StorekeeperLogging"]),
    // JWS encodings both JWT checkers need (Apple's signed data, the app's sign-in tokens).
    .target(name: "JOSE"),
    // The server's own requests to others through URLSession, with a kept deadline.
    .target(name: "OutboundHTTP"),
    .target(
      name: "AppStore",
      dependencies: ["COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging"]),
    // Google Play's Developer API, its notifications and their push tokens: a peer of AppStore
    // (it knows neither HTTP, Postgres nor AppAuth).
    .target(
      name: "GooglePlay",
      dependencies: ["COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging"]),
    // Who the app's user is: JWT/JWKS and API-key checks, knowing neither HTTP nor Postgres.
    .target(
      name: "AppAuth",
      dependencies: ["COpenSSL", "Digest", "JOSE", "OutboundHTTP", "StorekeeperLogging"]),
    .target(
      name: "Storekeeper",
      dependencies: [
        "HTTP", "Postgres", "AppStore", "AppAuth", "Digest", "StorekeeperLogging", "CBuildInfo",
      ]),
    .target(
      name: "FakeAppStore",
      dependencies: ["AppStore", "HTTP", "COpenSSL", "Digest", "JOSE", "StorekeeperLogging"]),
    .target(
      name: "FakeGooglePlay",
      dependencies: ["GooglePlay", "HTTP", "COpenSSL", "JOSE", "StorekeeperLogging"]),
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
    .testTarget(name: "HTTPTests", dependencies: ["HTTP", "CSystem", "StorekeeperLogging"]),
    .testTarget(
      name: "AppAuthTests", dependencies: ["AppAuth", "StorekeeperLogging"], exclude: ["Vectors"]),
    .testTarget(name: "PostgresTests", dependencies: ["Postgres", "Digest", "StorekeeperLogging"]),
    .testTarget(
      name: "AppStoreTests",
      dependencies: ["AppStore", "COpenSSL", "FakeAppStore", "HTTP", "JOSE", "StorekeeperLogging"]),
    .testTarget(
      name: "GooglePlayTests",
      dependencies: [
        "GooglePlay", "FakeGooglePlay", "HTTP", "COpenSSL", "JOSE", "OutboundHTTP",
        "StorekeeperLogging",
      ]),
    .testTarget(
      name: "StorekeeperTests",
      dependencies: [
        "Storekeeper", "FakeAppStore", "HTTP", "Postgres", "AppStore", "AppAuth", "Digest",
        "StorekeeperLogging",
      ]),
  ],
  swiftLanguageModes: [.v6]
)
