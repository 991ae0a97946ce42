import StorekeeperCore

/// Every offering encoded once per catalog change, per storefront that prices one of its
/// products differently (others share the default encoding), and the placements that choose
/// between them. A request then evaluates rules on this memory and copies bytes.
struct ServedOfferings: Sendable {
  struct Encoded: Sendable {
    var fallback: CatalogSnapshot.Entry
    var byStorefront: [String: CatalogSnapshot.Entry]

    func entry(_ storefront: String?) -> CatalogSnapshot.Entry {
      if let storefront, let entry = byStorefront[storefront] { return entry }
      return fallback
    }

    /// Every representation with one more header (an experiment's variant), built once here.
    func adding(_ name: String, _ value: String) -> Encoded {
      Encoded(
        fallback: fallback.adding(name, value),
        byStorefront: byStorefront.mapValues { $0.adding(name, value) })
    }
  }

  var offerings: [String: Encoded]
  var placements: [String: ServedPlacement]

  init(contents: CatalogContents, pricesByStorefront: [String: [String: StorefrontPrice]]) throws {
    let active = Dictionary(contents.products.map { ($0.productId, $0) }, uniquingKeysWith: { $1 })
    var drafts = contents.offerings.map(\.draft)
    if !drafts.contains(where: { $0.offeringId == OfferingDraft.catalogOfferingId }) {
      drafts.append(
        OfferingDraft(
          offeringId: OfferingDraft.catalogOfferingId, title: "", badge: "",
          metadata: .object([:]),
          items: contents.products.map { OfferingItem(productId: $0.productId) }))
    }
    var offerings: [String: Encoded] = [:]
    for draft in drafts {
      let items = draft.items.compactMap { item in active[item.productId].map { (item, $0) } }
      func encode(_ storefront: [String: StorefrontPrice]?) throws -> CatalogSnapshot.Entry {
        let view = OfferingView(
          offeringId: draft.offeringId, title: draft.title, badge: draft.badge,
          metadata: draft.metadata,
          products: items.map { item, product in
            OfferingView.Item(
              product: product.publicView(at: storefront?[product.productId]), badge: item.badge)
          })
        let body = try JSONCoding.encode(view)
        return CatalogSnapshot.Entry(
          body: body, etag: CatalogSnapshot.etag(of: body), vary: OfferingRequest.vary)
      }
      var byStorefront: [String: CatalogSnapshot.Entry] = [:]
      for (storefront, prices) in pricesByStorefront
      where items.contains(where: { prices[$0.1.productId] != nil }) {
        byStorefront[storefront] = try encode(prices)
      }
      offerings[draft.offeringId] = Encoded(fallback: try encode(nil), byStorefront: byStorefront)
    }
    self.offerings = offerings
    let experiments = Dictionary(
      contents.experiments.map { ($0.placementId, $0) }, uniquingKeysWith: { $1 })
    var placements: [String: ServedPlacement] = [:]
    for placement in contents.placements {
      placements[placement.placementId] = ServedPlacement(
        placementId: placement.placementId, offeringId: placement.offeringId,
        rules: placement.rules, experiment: experiments[placement.placementId],
        offerings: offerings)
    }
    if placements[Placement.defaultId] == nil {
      placements[Placement.defaultId] = ServedPlacement(
        placementId: Placement.defaultId, offeringId: OfferingDraft.catalogOfferingId, rules: [],
        experiment: nil, offerings: offerings)
    }
    self.placements = placements
  }
}
