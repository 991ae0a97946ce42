import Foundation
import HTTP
import StorekeeperLogging
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// The console's files: which are served, under which paths, with which headers.
@Suite struct ConsoleAssetsTests {
  static func directory(_ files: [String: String]) throws -> String {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("console-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    for (name, text) in files {
      try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
    }
    try FileManager.default.createDirectory(
      atPath: path + "/nested.js", withIntermediateDirectories: true)
    return path
  }

  static let logger = Logger(label: "test", level: .critical)

  @Test func onlyPlainNamesOfKnownTypesAreServed() throws {
    let path = try Self.directory([
      "index.html": "<!doctype html>", "app.js": "export {}", "look.css": "a{}",
      ".hidden.js": "x", "two.dots.js": "x", "notes.md": "x", "secret.key": "x",
    ])
    let assets = try #require(ConsoleAssets.load(directory: path, logger: Self.logger))
    #expect(assets.files.map(\.name) == ["app.js", "index.html", "look.css"])
    #expect(
      assets.files.map(\.contentType) == [
        "text/javascript; charset=utf-8", "text/html; charset=utf-8", "text/css; charset=utf-8",
      ])
  }

  @Test func aDirectoryWithoutIndexOrMissingServesNothing() throws {
    let path = try Self.directory(["app.js": "export {}"])
    #expect(ConsoleAssets.load(directory: path, logger: Self.logger) == nil)
    #expect(ConsoleAssets.load(directory: path + "/absent", logger: Self.logger) == nil)
  }

  @Test func answersCarryTheSecurityHeadersAndRevalidateByETag() async throws {
    let path = try Self.directory(["index.html": "<!doctype html>", "app.js": "export {}"])
    let assets = try #require(ConsoleAssets.load(directory: path, logger: Self.logger))
    var router = APIRouter(logger: Self.logger)
    ConsoleRoutes(assets: assets).register(&router)
    let page = await router.router.handle(Request(method: .get, target: "/admin/"))
    #expect(page.status == 200)
    #expect(page.body == Array("<!doctype html>".utf8))
    #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
    let policy = try #require(page.headers["Content-Security-Policy"])
    #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
    #expect(!policy.contains("unsafe-inline"))
    #expect(page.headers["X-Content-Type-Options"] == "nosniff")
    #expect(page.headers["Referrer-Policy"] == "no-referrer")
    let etag = try #require(page.headers["ETag"])
    let cached = await router.router.handle(
      Request(method: .get, target: "/admin/", headers: HTTPHeaders([("If-None-Match", etag)])))
    #expect(cached.status == 304 && cached.body.isEmpty)
    #expect(cached.headers["Content-Security-Policy"] == policy)
    // If-None-Match compares weakly: a tag a proxy weakened, or one in a list, still matches.
    for presented in ["W/\(etag)", "\"other\", \(etag)"] {
      let revalidated = await router.router.handle(
        Request(
          method: .get, target: "/admin/", headers: HTTPHeaders([("If-None-Match", presented)])))
      #expect(revalidated.status == 304, "\(presented)")
    }
    let changed = await router.router.handle(
      Request(
        method: .get, target: "/admin/", headers: HTTPHeaders([("If-None-Match", "W/\"other\"")])))
    #expect(changed.status == 200)
    let redirect = await router.router.handle(Request(method: .get, target: "/admin"))
    #expect(redirect.status == 308 && redirect.headers["Location"] == "/admin/")
    for target in ["/admin/index.html", "/admin/nested.js", "/admin/app.js/x"] {
      #expect(await router.router.handle(Request(method: .get, target: target)).status == 404)
    }
  }

  @Test func consolePathsAreTheAdminPagesNotTheAPI() {
    #expect(ConsoleRoutes.isConsolePath("/admin"))
    #expect(ConsoleRoutes.isConsolePath("/admin/"))
    #expect(ConsoleRoutes.isConsolePath("/admin/app.js"))
    #expect(!ConsoleRoutes.isConsolePath("/admin/v1/products"))
    #expect(!ConsoleRoutes.isConsolePath("/v1/products"))
  }

  @Test func adjustmentAssetsAreNamesAGrantCouldUse() {
    for good in ["gold", "gems_2", "vip-coins", "a.b"] {
      #expect(AdjustmentRequest.isValidAsset(good))
    }
    for bad in ["", "gold coins", "gold\u{0}", String(repeating: "a", count: 65), "ö"] {
      #expect(!AdjustmentRequest.isValidAsset(bad))
    }
  }
}
