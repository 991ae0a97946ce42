/// Why an admin's change to storefront prices, offerings, placements or experiments is refused;
/// the edge maps each case to its problem answer.
package enum OfferingRefusal: Error, Equatable, Sendable {
  case priceNotFound(productId: String, storefront: String)
  case offeringNotFound(String)
  case placementNotFound(String)
  case experimentNotFound(String)
  /// Products an offering names that the catalog does not have.
  case unknownProducts([String])
  /// Offerings a placement, its rules or an experiment's variants name that do not exist, and
  /// the fields naming them (`rules[2].offering_id`).
  case unknownOfferings([String], fields: [String])
  /// A placement or an experiment still names it.
  case offeringInUse(String, by: String)
  /// An experiment still decides this placement.
  case placementInUse(String, by: String)
  /// The placement already has an experiment that is not concluded.
  case experimentAlreadyRunning(placement: String, experiment: String)
  /// Experiment ids are never reused: results and events name them.
  case experimentExists(String)
  /// The change needs the experiment in another state (pausing a concluded one).
  case experimentState(String, status: String)
  /// The winner named is not one of the experiment's variants.
  case unknownVariant(String)
  /// `If-Match` named a version of the placement that is no longer the stored one (an
  /// experiment's conclusion, or another admin, changed it since it was read).
  case placementChanged(String)
}
