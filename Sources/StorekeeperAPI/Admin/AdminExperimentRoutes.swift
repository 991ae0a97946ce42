import HTTP
import StorekeeperCore

/// `/admin/v1/experiments…`: split a placement's audience between offerings, follow the
/// results, pause, resume and conclude.
package struct AdminExperimentRoutes: Sendable {
  let auth: AdminAuthenticator
  let repository: ExperimentRepository
  let cache: ServedCatalog
  /// This instance's exposures not yet written: written before a conclusion, so the results
  /// its event carries count what this instance served.
  let exposures: ExposureRecorder?

  package init(
    auth: AdminAuthenticator, repository: ExperimentRepository, cache: ServedCatalog,
    exposures: ExposureRecorder? = nil
  ) {
    self.auth = auth
    self.repository = repository
    self.cache = cache
    self.exposures = exposures
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/experiments") { request, context in
      _ = try auth.authenticate(request, context)
      struct List: Encodable { var experiments: [Experiment] }
      return try JSONCoding.response(List(experiments: try await repository.experiments()))
    }
    router.add(.post, "/admin/v1/experiments") { request, context in
      let admin = try auth.authenticate(request, context)
      let draft = try Self.draft(try RequestFields(request: request))
      let experiment = try await repository.create(
        experimentId: draft.id, placementId: draft.placement, variants: draft.variants,
        attributionHours: draft.hours, by: admin)
      await refresh(context)
      context.logger.notice(
        "experiment started",
        [
          "experiment_id": .string(draft.id), "placement_id": .string(draft.placement),
          "admin": .string(admin.name),
        ])
      return try JSONCoding.response(experiment, status: 201)
    }
    router.add(.get, "/admin/v1/experiments/{experiment_id}") { request, context in
      _ = try auth.authenticate(request, context)
      return try JSONCoding.response(try await existing(context))
    }
    router.add(.get, "/admin/v1/experiments/{experiment_id}/results") { request, context in
      _ = try auth.authenticate(request, context)
      let experiment = try await existing(context)
      struct Results: Encodable {
        var experiment: Experiment
        var variants: [VariantResult]
      }
      return try JSONCoding.response(
        Results(experiment: experiment, variants: try await repository.results(experiment)))
    }
    for (action, running) in [("pause", false), ("resume", true)] {
      router.add(.post, "/admin/v1/experiments/{experiment_id}/\(action)") { request, context in
        let admin = try auth.authenticate(request, context)
        let id = try AdminOfferingRoutes.id(
          context, "experiment_id", notFound: "experiment_not_found")
        let experiment = try await repository.setRunning(id, running, by: admin)
        await refresh(context)
        context.logger.notice(
          running ? "experiment resumed" : "experiment paused",
          ["experiment_id": .string(id), "admin": .string(admin.name)])
        return try JSONCoding.response(experiment)
      }
    }
    router.add(.post, "/admin/v1/experiments/{experiment_id}/conclude") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = try AdminOfferingRoutes.id(
        context, "experiment_id", notFound: "experiment_not_found")
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["winner"])
      let winner = fields.string("winner", required: true, maxLength: 64) ?? ""
      try fields.validate()
      // Another instance's buffer (a second's worth at most) is written after the conclusion:
      // later results count it, the event does not (docs/OFFERINGS.md).
      do { try await exposures?.flush() } catch {
        context.logger.warning(
          "exposures waiting to be written are left out of the conclusion's results",
          ["experiment_id": .string(id), "error": .string("\(error)")])
      }
      let experiment = try await repository.conclude(id, winner: winner, by: admin)
      await refresh(context)
      context.logger.notice(
        "experiment concluded",
        ["experiment_id": .string(id), "winner": .string(winner), "admin": .string(admin.name)])
      return try JSONCoding.response(experiment)
    }
  }

  struct Draft {
    var id: String
    var placement: String
    var variants: [ExperimentVariant]
    var hours: Int
  }

  /// POST's body: `experiment_id`, `placement_id`, 2-4 `variants` (`variant`, `offering_id`,
  /// `weight`) and `attribution_hours`.
  static func draft(_ fields: RequestFields) throws -> Draft {
    var fields = fields
    fields.rejectUnknown(allowed: [
      "experiment_id", "placement_id", "variants", "attribution_hours",
    ])
    var ids: [String] = []
    for name in ["experiment_id", "placement_id"] {
      let id = fields.string(name, required: true, maxLength: 64) ?? ""
      if fields.has(name), !OfferingDraft.isValidId(id) {
        fields.fail(name, "must be 1-64 of [a-z0-9_-]")
      }
      ids.append(id)
    }
    let hours =
      fields.integer(
        "attribution_hours", range: 1...Int64(Experiment.maxAttributionHours))
      ?? Int64(Experiment.defaultAttributionHours)
    var variants: [ExperimentVariant] = []
    switch fields.values["variants"] {
    case .array(let items)? where ExperimentVariant.variantCounts.contains(items.count):
      for (index, item) in items.enumerated() {
        let field = "variants[\(index)]"
        guard case .object(let object) = item else {
          fields.fail(field, "must be an object with variant, offering_id and weight")
          continue
        }
        for key in object.keys.sorted() where !["variant", "offering_id", "weight"].contains(key) {
          fields.fail("\(field).\(key)", "is not a known field")
        }
        var variant = ExperimentVariant(variant: "", offeringId: "", weight: 0)
        for key in ["variant", "offering_id"] {
          guard case .string(let id)? = object[key], OfferingDraft.isValidId(id) else {
            fields.fail("\(field).\(key)", "is required, 1-64 of [a-z0-9_-]")
            continue
          }
          if key == "variant" { variant.variant = id } else { variant.offeringId = id }
        }
        if case .number(let number)? = object["weight"],
          case .value(let weight) = JSONInteger(number),
          (1...Int64(ExperimentVariant.maxWeight)).contains(weight)
        {
          variant.weight = Int(weight)
        } else {
          fields.fail(
            "\(field).weight", "must be an integer between 1 and \(ExperimentVariant.maxWeight)")
        }
        if !variant.variant.isEmpty, variants.contains(where: { $0.variant == variant.variant }) {
          fields.fail("\(field).variant", "names a variant twice")
        }
        variants.append(variant)
      }
    case nil: fields.fail("variants", "is required")
    default: fields.fail("variants", "must be an array of 2 to 4 variants")
    }
    try fields.validate()
    return Draft(id: ids[0], placement: ids[1], variants: variants, hours: Int(hours))
  }

  private func existing(_ context: Context) async throws -> Experiment {
    let id = try AdminOfferingRoutes.id(context, "experiment_id", notFound: "experiment_not_found")
    guard let experiment = try await repository.experiment(id) else {
      throw OfferingRefusal.experimentNotFound(id)
    }
    return experiment
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
