import HTTP
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct ProductDraftTests {
  func fields(_ values: [String: JSONValue]) -> RequestFields { RequestFields(values: values) }

  func failures(_ id: String, _ values: [String: JSONValue]) -> [String] {
    do {
      _ = try ProductDraft.replacing(productId: id, with: fields(values))
      return []
    } catch let error as HTTPError {
      return error.fields.map(\.field)
    } catch {
      return ["unexpected"]
    }
  }

  let gold: [String: JSONValue] = [
    "type": .string("consumable"), "title": .string("60 Gold"), "price": .string("6"),
    "currency": .string("USD"), "grants": .object(["balance": .object(["gold": .number("60")])]),
  ]

  @Test func normalisesThePriceToTheCurrency() throws {
    let draft = try ProductDraft.replacing(productId: "com.example.gold60", with: fields(gold))
    #expect(draft.price == "6.00")
    #expect(draft.grants.balance == ["gold": 60])
    var yen = gold
    yen["currency"] = .string("JPY")
    yen["price"] = .string("600")
    #expect(try ProductDraft.replacing(productId: "g", with: fields(yen)).price == "600")
  }

  @Test func reportsEachInvalidFieldByName() {
    #expect(failures("bad id!", gold) == ["product_id"])
    #expect(failures("g", gold.merging(["price": .string("6.001")]) { $1 }) == ["price"])
    #expect(failures("g", gold.merging(["price": .number("6")]) { $1 }) == ["price"])
    #expect(failures("g", gold.merging(["currency": .string("XXX")]) { $1 }) == ["currency"])
    #expect(failures("g", gold.merging(["type": .string("gift")]) { $1 }) == ["type"])
    #expect(
      failures("g", gold.merging(["sort_order": .number("2147483648")]) { $1 }) == ["sort_order"])
    #expect(failures("g", gold.merging(["colour": .string("red")]) { $1 }) == ["colour"])
    #expect(failures("g", gold.merging(["title": .string("")]) { $1 }) == ["title"])
  }

  @Test func checksGrantsAgainstTheProductType() {
    let vip: [String: JSONValue] = [
      "type": .string("non_renewing"), "title": .string("VIP"), "price": .string("30.00"),
      "currency": .string("CNY"), "grants": .object(["entitlement": .string("vip")]),
    ]
    #expect(failures("vip", vip) == ["grants.duration_days"])
    var ok = vip
    ok["grants"] = .object(["entitlement": .string("vip"), "duration_days": .number("30")])
    #expect(failures("vip", ok) == [])
    var wrong = gold
    wrong["grants"] = .object(["balance": .object(["gold": .number("-5")])])
    #expect(failures("g", wrong) == ["grants.balance.gold"])
    wrong["grants"] = .object(["bonus": .number("1")])
    #expect(failures("g", wrong).contains("grants.bonus"))
  }
}
