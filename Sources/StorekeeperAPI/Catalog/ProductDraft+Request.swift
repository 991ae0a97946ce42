import Foundation
import StorekeeperCore

/// Reading a product draft from an admin's PUT or PATCH body (the edge's part of
/// `ProductDraft`): every problem is reported with its field.
extension ProductDraft {
  /// PUT: the body is the whole product but its id, which is the URL's.
  static func replacing(productId: String, with fields: RequestFields) throws -> ProductDraft {
    var fields = fields
    fields.rejectUnknown(allowed: putFields)
    if !isValidProductId(productId) {
      fields.fail("product_id", "must be 1-100 of letters, digits, '.', '_', '-'")
    }
    let typeName = fields.string("type", required: true, maxLength: 32)
    let type = typeName.flatMap(ProductType.init(rawValue:))
    if typeName != nil && type == nil {
      fields.fail("type", "must be one of consumable, non_consumable, auto_renewable, non_renewing")
    }
    var draft = ProductDraft(
      productId: productId, type: type ?? .consumable,
      title: fields.string("title", required: true, maxLength: 200) ?? "",
      description: fields.string("description", maxLength: 2000) ?? "",
      price: fields.string("price", required: true, maxLength: 40) ?? "0",
      currency: fields.string("currency", required: true, maxLength: 3) ?? "USD",
      sortOrder: Int32(
        fields.integer("sort_order", range: Int64(Int32.min)...Int64(Int32.max)) ?? 0),
      active: fields.bool("active") ?? true,
      grants: .empty, content: .object([:]))
    draft.apply(grantsAndContentFrom: &fields)
    draft.apply(googleFrom: &fields)
    draft.check(&fields, priceGiven: fields.has("price"))
    try fields.validate()
    return draft
  }

  /// PATCH: only the fields present change.
  static func patching(_ current: Product, with fields: RequestFields) throws -> ProductDraft {
    var fields = fields
    if fields.has("type") || fields.has("product_id") {
      fields.fail(fields.has("type") ? "type" : "product_id", "cannot be changed by PATCH; use PUT")
    }
    fields.rejectUnknown(allowed: patchFields.union(["type", "product_id"]))
    if fields.values.isEmpty { fields.fail("body", "must name at least one field to change") }
    var draft = current.draft
    if let title = fields.string("title", maxLength: 200) { draft.title = title }
    if let description = fields.string("description", maxLength: 2000) {
      draft.description = description
    }
    if let price = fields.string("price", maxLength: 40) { draft.price = price }
    if let currency = fields.string("currency", maxLength: 3) { draft.currency = currency }
    if let order = fields.integer("sort_order", range: Int64(Int32.min)...Int64(Int32.max)) {
      draft.sortOrder = Int32(order)
    }
    if let active = fields.bool("active") { draft.active = active }
    draft.apply(grantsAndContentFrom: &fields)
    draft.apply(googleFrom: &fields)
    draft.check(&fields, priceGiven: fields.has("price") || fields.has("currency"))
    try fields.validate()
    return draft
  }

  /// `google_product_id` and `google_base_plan_id`; the empty string sets either back to its
  /// default (the App Store id; any base plan).
  private mutating func apply(googleFrom fields: inout RequestFields) {
    if let id = fields.string("google_product_id", maxLength: 100) {
      if id.isEmpty {
        googleProductId = nil
      } else if Self.isValidProductId(id) {
        // Stored only when it differs, so a product renamed later keeps following its id.
        googleProductId = id == productId ? nil : id
      } else {
        fields.fail("google_product_id", "must be 1-100 of letters, digits, '.', '_', '-'")
      }
    }
    if let plan = fields.string("google_base_plan_id", maxLength: 63) {
      if plan.isEmpty {
        googleBasePlanId = nil
      } else if Self.isValidBasePlanId(plan) {
        googleBasePlanId = plan
      } else {
        fields.fail(
          "google_base_plan_id",
          "must be 1-63 of lowercase letters, digits and '-', not starting with '-'")
      }
    }
    if googleBasePlanId != nil, type != .autoRenewable {
      fields.fail("google_base_plan_id", "only a subscription (auto_renewable) has a base plan")
    }
  }

  private mutating func apply(grantsAndContentFrom fields: inout RequestFields) {
    if case .object(let object)? = fields.object("grants") {
      grants = Grants.read(object, into: &fields)
    }
    if let contentValue = fields.object("content") {
      if !contentValue.numbersCanBeWritten {
        fields.fail("content", JSONValue.unwritableNumberMessage)
      } else if let bytes = try? JSONCoding.encode(contentValue), bytes.count > Self.maxContentBytes
      {
        fields.fail("content", "must be at most \(Self.maxContentBytes) bytes of JSON")
      } else {
        content = contentValue
      }
    }
  }

  /// Cross-field rules: currency code, price against the currency's exponent, grants by type.
  private mutating func check(_ fields: inout RequestFields, priceGiven: Bool) {
    // Unicode's White_Space, the class openapi.yaml's Title pattern spells out.
    if title.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
      fields.fail("title", "must not be empty or only whitespace")
    }
    guard let exponent = Currency.exponent(of: currency) else {
      fields.fail("currency", "must be an ISO 4217 code such as USD, CNY or JPY")
      return
    }
    do {
      let units = try Money.minorUnits(price, exponent: exponent)
      price = Money.format(minorUnits: units, exponent: exponent)
    } catch .notADecimal {
      fields.fail("price", "must be a non-negative decimal string such as \"6.00\"")
    } catch .tooManyFractionDigits(let allowed) {
      fields.fail("price", "\(currency) allows \(allowed) fraction digit\(allowed == 1 ? "" : "s")")
    } catch {
      fields.fail("price", "must have at most \(Money.maxIntegerDigits) integer digits")
    }
    for problem in grants.problems(for: type) { fields.fail(problem.field, problem.message) }
  }
}
