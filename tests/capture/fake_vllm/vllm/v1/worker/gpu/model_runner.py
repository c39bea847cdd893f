"""Model Runner V2's shape as the plugin knows it: execute_model calls prepare_attn for a real
step and prepare_dummy_attn for a warm-up. ``steps`` is filled by the test: one (input_batch,
gathered tables, slot mappings) per step."""


class GPUModelRunner:
    steps: list = []

    def execute_model(self, scheduler_output, intermediate_tensors=None):
        batch, self._gathered, self._slots = self.steps[scheduler_output.index]
        return self.prepare_attn(batch)

    def prepare_attn(self, input_batch):
        return self._gathered, self._slots

    def prepare_dummy_attn(self, input_batch):
        return self._gathered, self._slots

    def dummy_run(self, index):
        batch, self._gathered, self._slots = self.steps[index]
        return self.prepare_dummy_attn(batch)
