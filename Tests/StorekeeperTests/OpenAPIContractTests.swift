import Foundation
import HTTP
import StorekeeperLogging
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// The router and `openapi.yaml` must describe the same routes, both ways.
@Suite struct OpenAPIContractTests {
  static func specRoutes() throws -> Set<String> {
    let text = try String(contentsOfFile: "openapi.yaml", encoding: .utf8)
    var routes: Set<String> = []
    var inPaths = false
    var path: String?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line == "paths:" {
        inPaths = true
        continue
      }
      if inPaths, !line.isEmpty, !line.hasPrefix(" ") { break }
      guard inPaths else { continue }
      if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
        path = String(line.dropFirst(2).dropLast())
      } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
        let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
        if ["GET", "PUT", "POST", "PATCH", "DELETE"].contains(method) {
          routes.insert("\(method) \(path)")
        }
      }
    }
    return routes
  }

  @Test func everyRouteIsInTheSpecAndBack() throws {
    let config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.contract")
    let app = try Application(config: config, logger: Logger(label: "test", level: .critical))
    // The console's files are pages, not API: they are not in the contract.
    let served = Set(
      app.routes.filter { !ConsoleRoutes.isConsolePath($0.pattern) }.map {
        "\($0.method.rawValue) \($0.pattern)"
      })
    let documented = try Self.specRoutes()
    #expect(served.count >= 20)
    #expect(served.subtracting(documented).sorted() == [], "served but not documented")
    #expect(documented.subtracting(served).sorted() == [], "documented but not served")
  }

  /// Every problem `code` the server can answer, as its sources spell them: `code: "…"` and
  /// `notFound: "…"` arguments, `ParseError(status, "…", …)`, and the literals of each
  /// refusal's `var code: String`. The fakes and the benchmarks are not the server.
  static func sourceProblemCodes() throws -> [String: String] {
    let literal = /(?:code|notFound): "([a-z_]+)"/
    let parseError = /ParseError\(\s*\d+,\s*"([a-z_]+)"/
    let quoted = /"([a-z_]+)"/
    var codes: [String: String] = [:]
    let root = URL(fileURLWithPath: "Sources")
    let modules = try FileManager.default.contentsOfDirectory(atPath: root.path).filter {
      !$0.hasPrefix("Fake") && !$0.hasPrefix("storekeeper-fake") && !$0.hasSuffix("Bench")
    }
    for module in modules {
      let directory = root.appendingPathComponent(module)
      guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
      for case let file as String in files where file.hasSuffix(".swift") {
        let path = directory.appendingPathComponent(file).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var found: [Substring] = text.matches(of: literal).map(\.output.1)
        found += text.matches(of: parseError).map(\.output.1)
        var rest = text[...]
        while let start = rest.range(of: "var code: String {") {
          let after = rest[start.upperBound...]
          let line = after.prefix { $0 != "\n" }
          let end = line.contains("}") ? line.endIndex : after.range(of: "\n  }")?.lowerBound
          let body = after[..<(end ?? after.endIndex)]
          found += body.matches(of: quoted).map(\.output.1)
          rest = after
        }
        for code in found { codes[String(code)] = "\(module)/\(file)" }
      }
    }
    return codes
  }

  /// A client handles the codes the contract names: every one the server answers is named in
  /// openapi.yaml (in backquotes, as each response description names them), HTTP-layer and
  /// router codes included.
  @Test func everyProblemCodeTheServerAnswersIsNamedInTheSpec() throws {
    let spec = try String(contentsOfFile: "openapi.yaml", encoding: .utf8)
    let codes = try Self.sourceProblemCodes()
    #expect(codes.count >= 80)
    for known in ["rate_limited", "transaction_not_found", "too_many_connections", "invalid_proof"]
    {
      #expect(codes[known] != nil, "the scan misses \(known)")
    }
    let unnamed = codes.filter { !spec.contains("`\($0.key)`") }.map { "\($0.key) (\($0.value))" }
    #expect(unnamed.sorted() == [], "answered but named nowhere in openapi.yaml")
  }

  /// With `ADMIN_PORT`, the two listeners split the spec between them: the admin API and
  /// `/metrics` only on the admin one, everything else only on the public one (`/healthz` on
  /// both), and together still exactly the spec.
  @Test func aSeparateAdminListenerSplitsTheRoutesAndStillServesTheSpec() async throws {
    var config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.contract")
    config.adminPort = 0
    let app = try Application(config: config, logger: Logger(label: "test", level: .critical))
    let admin = try #require(app.adminRouter)
    func names(_ routes: [(method: HTTPMethod, pattern: String)]) -> Set<String> {
      Set(
        routes.filter { !ConsoleRoutes.isConsolePath($0.pattern) }.map {
          "\($0.method.rawValue) \($0.pattern)"
        })
    }
    func isAdminSurface(_ route: String) -> Bool {
      route.contains(" /admin/") || route.hasSuffix(" /metrics")
    }
    let publicRoutes = names(app.router.routes)
    let adminRoutes = names(admin.routes)
    #expect(publicRoutes.filter(isAdminSurface).sorted() == [])
    #expect(adminRoutes.filter { !isAdminSurface($0) }.sorted() == ["GET /healthz"])
    #expect(publicRoutes.union(adminRoutes) == (try Self.specRoutes()))
    #expect(adminRoutes.filter(isAdminSurface).count >= 10)
    for target in ["/admin/v1/products", "/metrics", "/admin/v1/audit"] {
      let response = await app.router.handle(Request(method: .get, target: target))
      #expect(response.status == 404, "\(target) on the public listener")
    }
    #expect(await admin.handle(Request(method: .get, target: "/healthz")).status == 200)
    #expect(await app.router.handle(Request(method: .get, target: "/healthz")).status == 200)
    #expect(await admin.handle(Request(method: .get, target: "/v1/products")).status == 404)
  }
}
