import HTTP
import StorekeeperCore

/// `/admin/v1/offerings…` and `/admin/v1/placements…`: what each place in an app offers, and
/// the targeting rules that choose it.
package struct AdminOfferingRoutes: Sendable {
  let auth: AdminAuthenticator
  let repository: OfferingRepository
  let cache: ServedCatalog

  package init(auth: AdminAuthenticator, repository: OfferingRepository, cache: ServedCatalog) {
    self.auth = auth
    self.repository = repository
    self.cache = cache
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/offerings") { request, context in
      _ = try auth.authenticate(request, context)
      struct List: Encodable { var offerings: [Offering] }
      return try JSONCoding.response(List(offerings: try await repository.offerings()))
    }
    router.add(.get, "/admin/v1/offerings/{offering_id}") { request, context in
      _ = try auth.authenticate(request, context)
      let id = try Self.id(context, "offering_id", notFound: "offering_not_found")
      guard let offering = try await repository.offering(id) else {
        throw HTTPError(404, code: "offering_not_found", detail: "no offering \(id)")
      }
      return try JSONCoding.response(offering)
    }
    router.add(.put, "/admin/v1/offerings/{offering_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let draft = try Self.offeringDraft(
        context.parameters["offering_id"] ?? "", try RequestFields(request: request))
      let result = try await repository.write(draft, by: admin)
      await refresh(context)
      context.logger.notice(
        "offering written",
        [
          "offering_id": .string(draft.offeringId), "admin": .string(admin.name),
          "created": .bool(result.created),
        ])
      return try JSONCoding.response(result.offering, status: result.created ? 201 : 200)
    }
    router.add(.delete, "/admin/v1/offerings/{offering_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = try Self.id(context, "offering_id", notFound: "offering_not_found")
      try await repository.removeOffering(id, by: admin)
      await refresh(context)
      context.logger.notice(
        "offering removed", ["offering_id": .string(id), "admin": .string(admin.name)])
      return Response(status: 204)
    }
    router.add(.get, "/admin/v1/placements") { request, context in
      _ = try auth.authenticate(request, context)
      struct List: Encodable { var placements: [Placement] }
      return try JSONCoding.response(List(placements: try await repository.placements()))
    }
    router.add(.get, "/admin/v1/placements/{placement_id}") { request, context in
      _ = try auth.authenticate(request, context)
      let id = try Self.id(context, "placement_id", notFound: "placement_not_found")
      guard let placement = try await repository.placement(id) else {
        throw HTTPError(404, code: "placement_not_found", detail: "no placement \(id)")
      }
      return try Self.respond(placement, status: 200)
    }
    router.add(.put, "/admin/v1/placements/{placement_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = context.parameters["placement_id"] ?? ""
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["offering_id", "rules"])
      if !OfferingDraft.isValidId(id) { fields.fail("placement_id", "must be 1-64 of [a-z0-9_-]") }
      let offeringId = fields.string("offering_id", required: true, maxLength: 64) ?? ""
      if fields.has("offering_id"), !OfferingDraft.isValidId(offeringId) {
        fields.fail("offering_id", "must be 1-64 of [a-z0-9_-]")
      }
      var rules: [TargetingRule] = []
      if let value = fields.values["rules"] {
        let parsed = TargetingRule.parseList(value)
        for problem in parsed.problems { fields.fail(problem.field, problem.message) }
        rules = parsed.rules
      }
      try fields.validate()
      let result = try await repository.writePlacement(
        id, offeringId: offeringId, rules: rules, ifMatch: request.headers["If-Match"], by: admin)
      await refresh(context)
      context.logger.notice(
        "placement written",
        [
          "placement_id": .string(id), "admin": .string(admin.name),
          "rules": .int(rules.count), "created": .bool(result.created),
        ])
      return try Self.respond(result.placement, status: result.created ? 201 : 200)
    }
    router.add(.delete, "/admin/v1/placements/{placement_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = try Self.id(context, "placement_id", notFound: "placement_not_found")
      try await repository.removePlacement(id, by: admin)
      await refresh(context)
      context.logger.notice(
        "placement removed", ["placement_id": .string(id), "admin": .string(admin.name)])
      return Response(status: 204)
    }
  }

  static func respond(_ placement: Placement, status: Int) throws -> Response {
    try JSONCoding.response(
      placement, status: status, headers: HTTPHeaders([("ETag", placement.etag)]))
  }

  /// A path id no record can have is simply not found.
  static func id(_ context: Context, _ name: String, notFound code: String) throws -> String {
    let id = context.parameters[name] ?? ""
    guard OfferingDraft.isValidId(id) else {
      throw HTTPError(404, code: code, detail: "no such \(name.dropLast(3))")
    }
    return id
  }

  /// PUT's body: `products` in order, each a product id or `{"product_id", "badge"}`.
  static func offeringDraft(_ id: String, _ fields: RequestFields) throws -> OfferingDraft {
    var fields = fields
    fields.rejectUnknown(allowed: ["title", "badge", "metadata", "products"])
    if !OfferingDraft.isValidId(id) { fields.fail("offering_id", "must be 1-64 of [a-z0-9_-]") }
    let title = fields.string("title", maxLength: 200) ?? ""
    let badge = fields.string("badge", maxLength: 100) ?? ""
    var metadata = JSONValue.object([:])
    if let value = fields.object("metadata") {
      if !value.numbersCanBeWritten {
        fields.fail("metadata", JSONValue.unwritableNumberMessage)
      } else if let bytes = try? JSONCoding.encode(value),
        bytes.count <= OfferingDraft.maxMetadataBytes
      {
        metadata = value
      } else {
        fields.fail("metadata", "must be at most \(OfferingDraft.maxMetadataBytes) bytes of JSON")
      }
    }
    var items: [OfferingItem] = []
    switch fields.values["products"] {
    case nil: fields.fail("products", "is required")
    case .array(let values)? where values.count <= OfferingDraft.maxItems:
      for (index, value) in values.enumerated() {
        let field = "products[\(index)]"
        var item: OfferingItem?
        switch value {
        case .string(let productId): item = OfferingItem(productId: productId)
        case .object(let object):
          for key in object.keys.sorted() where key != "product_id" && key != "badge" {
            fields.fail("\(field).\(key)", "is not a known field")
          }
          if case .string(let productId)? = object["product_id"] {
            item = OfferingItem(productId: productId)
          } else {
            fields.fail("\(field).product_id", "is required and must be a string")
          }
          switch object["badge"] {
          case nil: break
          case .string(let text)? where text.unicodeScalars.count <= 100 && !text.contains("\u{0}"):
            item?.badge = text
          default: fields.fail("\(field).badge", "must be a string of at most 100 characters")
          }
        default:
          fields.fail(field, "must be a product id or an object with product_id and badge")
        }
        guard let item else { continue }
        if !ProductDraft.isValidProductId(item.productId) {
          fields.fail(field, "must name a product id of 1-100 of letters, digits, '.', '_', '-'")
        } else if items.contains(where: { $0.productId == item.productId }) {
          fields.fail(field, "lists \(item.productId) twice")
        } else {
          items.append(item)
        }
      }
    default:
      fields.fail("products", "must be an array of at most \(OfferingDraft.maxItems) products")
    }
    try fields.validate()
    return OfferingDraft(
      offeringId: id, title: title, badge: badge, metadata: metadata, items: items)
  }

  /// This instance serves its own change at once; the others follow through NOTIFY.
  private func refresh(_ context: Context) async {
    do { try await cache.reload() } catch {
      context.logger.warning(
        "catalog reload after write failed; will retry", ["error": .string("\(error)")])
      cache.requestReload()
    }
  }
}
