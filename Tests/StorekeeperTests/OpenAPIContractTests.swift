import Foundation
import HTTP
import StorekeeperLogging
import Testing

@testable import Storekeeper

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
    let served = Set(app.routes.map { "\($0.method.rawValue) \($0.pattern)" })
    let documented = try Self.specRoutes()
    #expect(served.count >= 20)
    #expect(served.subtracting(documented).sorted() == [], "served but not documented")
    #expect(documented.subtracting(served).sorted() == [], "documented but not served")
  }
}
