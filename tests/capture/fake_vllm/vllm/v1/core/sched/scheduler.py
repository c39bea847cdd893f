class Scheduler:
    def add_request(self, request):
        return None

    def finish_requests(self, request_ids, finished_status):
        return None

    def schedule(self, throttle_prefills=False):
        return self.next_output

    def update_from_output(self, scheduler_output, model_runner_output):
        return {}
