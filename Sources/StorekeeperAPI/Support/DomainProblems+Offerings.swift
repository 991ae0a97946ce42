import HTTP
import StorekeeperCore

// DomainProblems' cases for storefront prices, offerings, placements and experiments, in a
// file of their own so the feature's answers read together.
extension OfferingRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .priceNotFound(let productId, let storefront):
      HTTPError(
        404, code: "price_not_found",
        detail: "\(productId) has no price of its own in \(storefront)")
    case .offeringNotFound(let id):
      HTTPError(404, code: "offering_not_found", detail: "no offering \(id)")
    case .placementNotFound(let id):
      HTTPError(404, code: "placement_not_found", detail: "no placement \(id)")
    case .experimentNotFound(let id):
      HTTPError(404, code: "experiment_not_found", detail: "no experiment \(id)")
    case .unknownProducts(let ids):
      HTTPError(
        422, code: "unknown_products", detail: "no such products: \(ids.joined(separator: ", "))",
        fields: [FieldError(field: "products", message: "names products that do not exist")])
    case .unknownOfferings(let ids, let fields):
      HTTPError(
        422, code: "unknown_offerings", detail: "no such offerings: \(ids.joined(separator: ", "))",
        fields: fields.map {
          FieldError(field: $0, message: "names an offering that does not exist")
        })
    case .offeringInUse(let id, let user):
      HTTPError(409, code: "offering_in_use", detail: "\(user) still serves offering \(id)")
    case .placementChanged(let id):
      HTTPError(
        412, code: "precondition_failed",
        detail: "placement \(id) changed since it was read; fetch it again")
    case .placementInUse(let id, let user):
      HTTPError(409, code: "placement_in_use", detail: "\(user) still belongs to placement \(id)")
    case .experimentAlreadyRunning(let placement, let experiment):
      HTTPError(
        409, code: "experiment_already_running",
        detail: "experiment \(experiment) already decides placement \(placement)")
    case .experimentExists(let id):
      HTTPError(409, code: "experiment_exists", detail: "experiment \(id) exists; choose a new id")
    case .experimentState(let id, let status):
      HTTPError(409, code: "experiment_state", detail: "experiment \(id) is \(status)")
    case .unknownVariant(let variant):
      HTTPError(
        422, code: "unknown_variant", detail: "no variant \(variant) in this experiment",
        fields: [FieldError(field: "winner", message: "must be one of the experiment's variants")])
    }
  }
}
