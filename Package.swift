// swift-tools-version:6.0
import PackageDescription

// Layers (DESIGN §2): C bridges at the bottom, then HTTP / Postgres / AppStore, which know
// nothing of each other, then the domain, then an executable that only wires.
let package = Package(
  name: "Storekeeper",
  products: [
    .executable(name: "storekeeper", targets: ["storekeeper"]),
    .executable(name: "storekeeper-fake-appstore", targets: ["storekeeper-fake-appstore"]),
  ],
  targets: [
    .target(name: "CSystem"),
    .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
    .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
    .target(name: "StorekeeperLogging"),
    .target(name: "HTTP", dependencies: ["CSystem", "StorekeeperLogging"]),
    .target(name: "Postgres", dependencies: ["CPostgres", "StorekeeperLogging"]),
    // JWS encodings both JWT checkers need (Apple's signed data, the app's sign-in tokens).
    .target(name: "JOSE"),
    // The server's own requests to others through URLSession, with a kept deadline.
    .target(name: "OutboundHTTP"),
    .target(
      name: "AppStore", dependencies: ["COpenSSL", "JOSE", "OutboundHTTP", "StorekeeperLogging"]),
    // Who the app's user is: JWT/JWKS and API-key checks, knowing neither HTTP nor Postgres.
    .target(
      name: "AppAuth", dependencies: ["COpenSSL", "JOSE", "OutboundHTTP", "StorekeeperLogging"]),
    // COpenSSL for one digest: admin tokens may be configured as their SHA-256.
    .target(
      name: "Storekeeper",
      dependencies: ["HTTP", "Postgres", "AppStore", "AppAuth", "COpenSSL", "StorekeeperLogging"]),
    .target(
      name: "FakeAppStore",
      dependencies: ["AppStore", "HTTP", "COpenSSL", "JOSE", "StorekeeperLogging"]),
    .executableTarget(name: "storekeeper", dependencies: ["Storekeeper"]),
    // Apple's stand-in for tests and the demo, apart so the shipped binary carries no fake CA.
    .executableTarget(name: "storekeeper-fake-appstore", dependencies: ["FakeAppStore"]),
    // A tiny server for bench/http (not shipped): the HTTP layer alone, against nginx.
    .executableTarget(
      name: "http-bench", dependencies: ["HTTP", "StorekeeperLogging"], path: "Sources/HTTPBench"),
    .executableTarget(
      name: "appstore-bench", dependencies: ["AppStore", "FakeAppStore"],
      path: "Sources/AppStoreBench"),
    .testTarget(name: "HTTPTests", dependencies: ["HTTP", "CSystem", "StorekeeperLogging"]),
    .testTarget(
      name: "AppAuthTests", dependencies: ["AppAuth", "StorekeeperLogging"], exclude: ["Vectors"]),
    .testTarget(name: "PostgresTests", dependencies: ["Postgres", "StorekeeperLogging"]),
    .testTarget(
      name: "AppStoreTests",
      dependencies: ["AppStore", "COpenSSL", "FakeAppStore", "HTTP", "JOSE", "StorekeeperLogging"]),
    .testTarget(
      name: "StorekeeperTests",
      dependencies: [
        "Storekeeper", "FakeAppStore", "HTTP", "Postgres", "AppStore", "AppAuth",
        "StorekeeperLogging",
      ]),
  ],
  swiftLanguageModes: [.v6]
)

// Every Swift target spells its existentials `any P` (the upcoming Swift 7 rule).
for target in package.targets where target.type != .system {
  target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("ExistentialAny")]
}
