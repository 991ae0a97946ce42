// swift-tools-version:6.0
import PackageDescription

// Layers (DESIGN §2): C bridges at the bottom, then HTTP / Postgres / AppStore, which know
// nothing of each other, then the domain, then an executable that only wires.
let package = Package(
  name: "Storekeeper",
  products: [
    .executable(name: "storekeeper", targets: ["storekeeper"])
  ],
  targets: [
    .target(name: "CSystem"),
    .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
    .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
    .target(name: "Logging"),
    .target(name: "HTTP", dependencies: ["CSystem", "Logging"]),
    .target(name: "Postgres", dependencies: ["CPostgres", "Logging"]),
    .target(name: "AppStore", dependencies: ["COpenSSL", "Logging"]),
    .target(name: "Storekeeper", dependencies: ["HTTP", "Postgres", "AppStore", "Logging"]),
    .target(name: "FakeAppStore", dependencies: ["AppStore", "HTTP", "COpenSSL", "Logging"]),
    .executableTarget(name: "storekeeper", dependencies: ["Storekeeper", "FakeAppStore"]),
    // A tiny server for bench/http (not shipped): the HTTP layer alone, against nginx.
    .executableTarget(name: "http-bench", dependencies: ["HTTP", "Logging"], path: "Sources/HTTPBench"),
    .executableTarget(
      name: "appstore-bench", dependencies: ["AppStore", "FakeAppStore"], path: "Sources/AppStoreBench"),
    .testTarget(name: "HTTPTests", dependencies: ["HTTP", "CSystem", "Logging"]),
    .testTarget(name: "PostgresTests", dependencies: ["Postgres", "Logging"]),
    .testTarget(
      name: "AppStoreTests", dependencies: ["AppStore", "FakeAppStore", "HTTP", "Logging"]),
    .testTarget(
      name: "StorekeeperTests",
      dependencies: ["Storekeeper", "FakeAppStore", "HTTP", "Postgres", "AppStore", "Logging"]),
  ],
  swiftLanguageModes: [.v6]
)
