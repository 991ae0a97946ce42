import HTTP
import StorekeeperCore

/// `GET /v1/offerings/{placement}`: the offering a placement serves this caller, chosen on the
/// event loop from the served catalog's memory. The database is asked only when a rule that
/// could match has conditions on the user (one statement, `UserFactsReader`).
///
/// Who the user is: a signed-in user's token (`APP_AUTH=jwt`), or the `user_id` a trusted
/// caller names (an API key, or `APP_AUTH=none`); a request with neither is anonymous and no
/// user condition holds for it. Credentials are only checked when the placement needs the user.
package struct OfferingRoutes: Sendable {
  let cache: ServedCatalog
  let auth: AppAuthenticator
  let facts: UserFactsReader
  let exposures: ExposureRecorder
  let clock: WallClock

  package init(
    cache: ServedCatalog, auth: AppAuthenticator, facts: UserFactsReader,
    exposures: ExposureRecorder, clock: WallClock
  ) {
    self.cache = cache
    self.auth = auth
    self.facts = facts
    self.exposures = exposures
    self.clock = clock
  }

  /// Names the experiment and variant that chose the offering, for the app's own analytics.
  static let experimentHeader = "Storekeeper-Experiment"

  /// The request headers an app sends with every request, for the server to share their names
  /// (`ServerConfiguration.sharedFieldNames`) rather than allocate them per request.
  package static let appHeaders = [
    StorefrontRequest.header, OfferingRequest.storeHeader, OfferingRequest.versionHeader,
  ]

  package func register(_ router: inout APIRouter) {
    // Answered on the event loop, like the catalog, unless a token must be verified or the
    // user's facts read: only those requests become tasks.
    router.addDeferrable(.get, "/v1/offerings/{placement}", placement: .eventLoop) {
      request, context in
      let id = context.parameters["placement"] ?? ""
      let (requestFacts, named) = try OfferingRequest.read(request)
      // Only valid ids are ever stored, so a lookup that finds one needs no check first.
      guard let placement = cache.read({ $0.offerings.placements[id] }) else {
        throw HTTPError(404, code: "placement_not_found", detail: "no placement \(id)")
      }
      guard placement.needsUser, request.headers["Authorization"] != nil || named != nil else {
        let rule = TargetingRule.firstIndexWithoutFacts(
          placement.rules, request: requestFacts, hasUser: false)
        return .response(
          try answer(placement, rule ?? nil, user: nil, requestFacts, request, context))
      }
      if let caller = try auth.callerNow(request, context) {
        let user = try auth.user(caller, named: named)
        if let rule = TargetingRule.firstIndexWithoutFacts(
          placement.rules, request: requestFacts, hasUser: user != nil)
        {
          return .response(try answer(placement, rule, user: user, requestFacts, request, context))
        }
      }
      return .later { request, context in
        let user = try auth.user(try await auth.caller(request, context), named: named)
        let rule = try await TargetingRule.firstIndex(placement.rules, request: requestFacts) {
          guard let user else { return nil }
          return try await facts.facts(user)
        }
        return try answer(placement, rule, user: user, requestFacts, request, context)
      }
    }
  }

  /// The offering the rule (by index) chose, else the variant a running experiment assigns
  /// the user (recorded as an exposure), else the placement's own, as its precomputed bytes.
  private func answer(
    _ placement: ServedPlacement, _ rule: Int?, user: String?,
    _ requestFacts: RequestFacts, _ request: Request, _ context: Context
  ) throws -> Response {
    // The representation is taken where it lies, not through a copy of the offering's
    // encodings (a retain and release of each of its tables per request).
    let storefront = requestFacts.storefront
    let entry: CatalogSnapshot.Entry?
    var variant: Int?
    var assignment: (index: Int, key: ExposureKey)?
    if let rule {
      entry = placement.ruleOfferings[rule]?.entry(storefront)
    } else if let user, placement.experiment != nil, let assigned = placement.assign(user) {
      // No rule chose: a running experiment splits the rest of the audience. Anonymous
      // callers cannot be assigned (nor counted), so they get the placement's own offering.
      entry = placement.variantOfferings[assigned.index]?.entry(storefront)
      variant = assigned.index
      assignment = assigned
    } else {
      entry = placement.own?.entry(storefront)
    }
    guard let entry else {
      // A placement names only offerings that exist (checked when it is written, and an
      // offering in use cannot be removed): this is a snapshot read mid-change.
      let offeringId =
        rule.map { placement.rules[$0].offeringId }
        ?? variant.flatMap { placement.experiment?.variants[$0].offeringId }
        ?? placement.offeringId
      context.logger.warning(
        "placement names an offering the catalog does not hold",
        ["placement": .string(placement.placementId), "offering": .string(offeringId)])
      throw HTTPError(
        503, code: "offering_unavailable", detail: "the offering is being changed; retry",
        headers: HTTPHeaders([("Retry-After", "1")]))
    }
    // Recorded only once the variant's offering is served: an answer of 503 showed nothing,
    // and neither does a HEAD (a link checker, a cache revalidating), which gets no body.
    if request.method != .head, let assignment, let user, let experiment = placement.experiment {
      exposures.record(assignment.key) {
        Exposure(
          experimentId: experiment.experimentId, userId: user,
          variant: experiment.variants[assignment.index].variant, atMs: clock.milliseconds)
      }
    }
    return CatalogRoutes.serve(entry, request)
  }
}
