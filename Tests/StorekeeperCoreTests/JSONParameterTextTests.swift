import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// `JSONValue.parameterText` (jsonb parameters written without Foundation) and
/// `Grants(databaseText:)` (a product's grants read without it): the same values as the
/// Foundation coding they replace, as the parser and PostgreSQL read them.
@Suite struct JSONParameterTextTests {
  static let values: [JSONValue] = [
    .null, .bool(true), .bool(false), .number("0"), .number("-12"), .number("1.5e3"),
    .string(""), .string("plain"), .string("quote \" backslash \\ slash /"),
    .string("controls \u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f} end"), .string("café ü 😀 \u{7f}"),
    .array([]), .object([:]),
    .array([.string("2000000123"), .string("GPA.1234-5678"), .number("7")]),
    .object(["gold": .number("100"), "gems": .number("5"), "k\"ey": .array([.null])]),
  ]

  @Test(arguments: values)
  func theParserReadsBackTheSameValue(_ value: JSONValue) throws {
    #expect(try JSONParser.parse(Array(value.parameterText.utf8), maxDepth: 8) == value)
  }

  @Test(arguments: values)
  func foundationReadsTheSameValueAsFromItsOwnText(_ value: JSONValue) throws {
    let ours = try JSONCoding.decode(JSONValue.self, fromText: value.parameterText)
    let theirs = try JSONCoding.decode(JSONValue.self, fromText: try JSONCoding.text(value))
    #expect(ours == theirs)
  }

  static let storedGrants = [
    #"{}"#, #"{"balance": {"gold": 100}}"#, #"{"balance": {"gems": 5, "gold": 1000000000}}"#,
    #"{"entitlement": "vip", "duration_days": 30}"#, #"{"entitlement": "vip"}"#,
    #"{"balance": null, "entitlement": null, "duration_days": null}"#,
    #"{"balance": {"gold": 100}, "unknown": [1, 2]}"#,
  ]

  @Test(arguments: storedGrants)
  func grantsReadAsFoundationReadsThem(_ text: String) throws {
    #expect(try Grants(databaseText: text) == JSONCoding.decode(Grants.self, fromText: text))
  }

  @Test(arguments: [
    #"[]"#, #""vip""#, #"{"balance": [100]}"#, #"{"balance": {"gold": "100"}}"#,
    #"{"balance": {"gold": 1.5}}"#, #"{"balance": {"gold": 1e30}}"#, #"{"entitlement": 1}"#,
    #"{"duration_days": "30"}"#, #"{"duration_days": 2.5}"#, "not json",
  ])
  func grantsOfTheWrongShapeAreAnError(_ text: String) {
    #expect(throws: (any Error).self) { try Grants(databaseText: text) }
    #expect(throws: (any Error).self) { try JSONCoding.decode(Grants.self, fromText: text) }
  }
}

@Suite(.database) struct JSONParameterTextDatabaseTests {
  /// PostgreSQL's jsonb reads each value as it reads Foundation's text of it.
  @Test func jsonbReadsTheSameDocument() async throws {
    try await DomainHarness.with { h in
      for value in JSONParameterTextTests.values {
        let row = try await h.database.query(
          """
          SELECT \(value.parameterText)::jsonb = \(try JSONCoding.text(value))::jsonb AS same,
                 \(value.parameterText)::jsonb::text AS ours
          """
        ).first
        #expect(try row?.decode("same", as: Bool.self) == true, "\(value)")
      }
    }
  }
}
