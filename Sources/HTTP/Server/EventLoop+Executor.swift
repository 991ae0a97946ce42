/// The loop as a task executor: handler tasks that prefer it run their jobs on the loop's
/// thread between epoll batches, so a request that awaits the database costs two thread
/// switches (to the database session's queue and back) instead of four.
extension EventLoop: TaskExecutor {
  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    if isOnLoopThread {
      localJobs.append(job)
    } else if !post(.job(job)) {
      globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }
  }

  /// Runs queued jobs until none is left (a job may queue more).
  func runLocalJobs() {
    while !localJobs.isEmpty {
      let jobs = localJobs
      localJobs.removeAll(keepingCapacity: true)
      for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
  }
}
