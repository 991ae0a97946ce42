import AppStore
import Foundation
import Testing

@testable import StorekeeperCore

/// The states the repeatable SQL definitions (`Migrations/repeatable`) compare with or write
/// are values of the Swift enums for them: renaming a case without the SQL, or the SQL
/// without the case, fails here instead of silently matching nothing.
@Suite struct SchemaLiteralTests {
  /// A literal in a place that names what it is, and the values allowed there.
  struct Rule {
    var name: String
    var pattern: String
    var allowed: Set<String>
  }

  static let productTypes = Set(ProductType.allCases.map(\.rawValue))

  static let rules = [
    Rule(
      name: "trade status", pattern: #"trade_status\s*(?:=|<>)\s*'([^']*)'"#,
      allowed: Set(TradeStatus.allCases.map(\.rawValue))),
    Rule(
      name: "product type", pattern: #"\bp\.type\s*(?:=|<>)\s*'([^']*)'"#, allowed: productTypes),
    Rule(
      name: "entitlement source", pattern: #"(?<!->)'source',\s*'([^']*)'"#, allowed: productTypes),
    Rule(
      name: "environment", pattern: #"environment\s*(?:=|<>)\s*'([^']*)'"#,
      allowed: Set(AppStoreEnvironment.allCases.map(\.rawValue))),
    Rule(
      name: "notification state",
      pattern: #"(?<!answer\.)(?<!delivery\.)(?<!OLD\.)(?<!NEW\.)\bstate\s*(?:=|<>)\s*'([^']*)'"#,
      allowed: Set(NotificationState.allCases.map(\.rawValue))),
    // `webhook_deliveries` is aliased `delivery` wherever its state is compared, and its
    // trigger compares `OLD.state` and `NEW.state` (no other trigger compares a state).
    Rule(
      name: "webhook delivery state",
      pattern: #"\b(?:delivery|OLD|NEW)\.state\s*(?:=|<>)\s*'([^']*)'"#,
      allowed: Set(WebhookDeliveryState.allCases.map(\.rawValue))),
    // `consumption_answers` is aliased `answer` wherever its state is compared.
    Rule(
      name: "consumption answer state", pattern: #"\banswer\.state\s*(?:=|<>)\s*'([^']*)'"#,
      allowed: Set(ConsumptionAnswer.State.allCases.map(\.rawValue))),
    // Every dotted name (`balance.changed`) is an event type wherever it appears.
    Rule(
      name: "event type", pattern: #"'([a-z_]+\.[a-z_]+)'"#,
      allowed: Set(EventType.allCases.map(\.rawValue))),
  ]

  static func repeatableFiles() throws -> [(name: String, sql: String)] {
    let directory = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Migrations/repeatable")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasSuffix(".sql") }.sorted()
    return try names.map { name in
      (name, try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))
    }
  }

  /// The SQL without its `--` comments, whose prose may quote anything.
  static func code(_ sql: String) -> String {
    sql.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line)
    }.joined(separator: "\n")
  }

  static func literals(_ rule: Rule, in sql: String) throws -> [String] {
    let regex = try NSRegularExpression(pattern: rule.pattern)
    let range = NSRange(sql.startIndex..., in: sql)
    return regex.matches(in: sql, range: range).compactMap { match in
      Range(match.range(at: 1), in: sql).map { String(sql[$0]) }
    }
  }

  @Test func everyStateTheDefinitionsCompareWithIsAnEnumValue() throws {
    let files = try Self.repeatableFiles()
    #expect(files.count >= 4)
    var seen: [String: Int] = [:]
    for file in files {
      let sql = Self.code(file.sql)
      for rule in Self.rules {
        for literal in try Self.literals(rule, in: sql) {
          seen[rule.name, default: 0] += 1
          #expect(
            rule.allowed.contains(literal),
            "\(file.name): '\(literal)' is not a \(rule.name) (\(rule.allowed.sorted()))")
        }
      }
    }
    // The rules still find what they are for: a pattern that matches nothing checks nothing.
    for name in [
      "trade status", "product type", "entitlement source", "environment", "event type",
      "webhook delivery state",
    ] {
      #expect(seen[name, default: 0] > 0, "no \(name) found in Migrations/repeatable")
    }
  }

  /// The values of the last definition of CHECK constraint `name` in the versioned
  /// migrations: the one a migrated database holds.
  static func latestCheck(_ name: String) throws -> Set<String>? {
    let directory = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Migrations")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasSuffix(".sql") }.sorted()
    let definition = try NSRegularExpression(
      pattern: #"ADD CONSTRAINT \#(name)\s+CHECK\s*\(\s*\w+\s+IN\s*\(([^)]*)\)"#)
    let literal = try NSRegularExpression(pattern: #"'([^']*)'"#)
    var latest: Set<String>?
    for file in names {
      let sql = code(
        try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8))
      for match in definition.matches(in: sql, range: NSRange(sql.startIndex..., in: sql)) {
        guard let list = Range(match.range(at: 1), in: sql).map({ String(sql[$0]) }) else {
          continue
        }
        latest = Set(
          literal.matches(in: list, range: NSRange(list.startIndex..., in: list)).compactMap {
            Range($0.range(at: 1), in: list).map { String(list[$0]) }
          })
      }
    }
    return latest
  }

  /// `admin_audit` refuses what its CHECK constraints do not list: an audited change whose
  /// action or target type the migrations left out would fail in production, and a value
  /// the code never writes is dead. Both lists are the enums, exactly.
  @Test func theAuditChecksListEveryActionAndTargetType() throws {
    #expect(
      try Self.latestCheck("admin_audit_action_check")
        == Set(AdminAction.allCases.map(\.rawValue)))
    #expect(
      try Self.latestCheck("admin_audit_target_type_check")
        == Set(AuditTargetType.allCases.map(\.rawValue)))
    // Every action's target type is one the constraint allows.
    let targets = try Self.latestCheck("admin_audit_target_type_check") ?? []
    for action in AdminAction.allCases {
      #expect(targets.contains(action.targetType.rawValue), "\(action)")
    }
  }

  @Test func aLiteralOutsideItsEnumIsFound() throws {
    let sql = "WHERE o.trade_status = 'TRADE_SUCCES' AND p.type = 'consumable'"
    #expect(try Self.literals(Self.rules[0], in: sql) == ["TRADE_SUCCES"])
    #expect(!Self.rules[0].allowed.contains("TRADE_SUCCES"))
    #expect(try Self.literals(Self.rules[1], in: sql) == ["consumable"])
  }
}
