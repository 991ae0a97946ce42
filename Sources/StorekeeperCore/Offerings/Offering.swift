import Postgres

/// An offering as stored: what an admin edits (`draft`) plus its bookkeeping.
package struct Offering: Encodable, Sendable, Equatable {
  package var draft: OfferingDraft
  var revision: Int64
  var createdAt: String
  var updatedAt: String

  package var offeringId: String { draft.offeringId }

  enum CodingKeys: String, CodingKey {
    case offeringId = "offering_id"
    case title, badge, metadata, products, revision
    case createdAt = "created_at"
    case updatedAt = "updated_at"
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(draft.offeringId, forKey: .offeringId)
    try container.encode(draft.title, forKey: .title)
    try container.encode(draft.badge, forKey: .badge)
    try container.encode(draft.metadata, forKey: .metadata)
    try container.encode(draft.items, forKey: .products)
    try container.encode(revision, forKey: .revision)
    try container.encode(createdAt, forKey: .createdAt)
    try container.encode(updatedAt, forKey: .updatedAt)
  }

  /// The products come as a JSON array aggregated beside the row, in position order.
  static let columns = """
    o.offering_id, o.title, o.badge, o.metadata::text AS metadata, o.revision,
    \(SQLTime.rfc3339("o.created_at", as: "created_at")),
    \(SQLTime.rfc3339("o.updated_at", as: "updated_at")),
    (SELECT coalesce(jsonb_agg(jsonb_build_object('product_id', i.product_id, 'badge', i.badge)
                               ORDER BY i.position), '[]')::text
     FROM offering_products i WHERE i.offering_id = o.offering_id) AS items
    """

  init(row: PostgresRow) throws {
    draft = OfferingDraft(
      offeringId: try row.decode("offering_id"), title: try row.decode("title"),
      badge: try row.decode("badge"),
      metadata: try JSONValue(databaseText: try row.decode("metadata")),
      items: try JSONCoding.decode([OfferingItem].self, fromText: try row.decode("items")))
    revision = try row.decode("revision")
    createdAt = try row.decode("created_at")
    updatedAt = try row.decode("updated_at")
  }
}
