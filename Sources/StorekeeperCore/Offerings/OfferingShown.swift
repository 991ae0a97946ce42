/// The placement and offering an order was made from, as the app names them, and the
/// experiment variant that offering was for this user, when one was.
package struct OfferingShown: Sendable, Equatable {
  package var placementId: String
  package var offeringId: String
  package var experimentId: String?
  package var variant: String?

  package init(
    placementId: String, offeringId: String, experimentId: String? = nil, variant: String? = nil
  ) {
    self.placementId = placementId
    self.offeringId = offeringId
    self.experimentId = experimentId
    self.variant = variant
  }
}
