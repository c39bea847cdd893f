"""Kernel lab page prose."""
STRINGS = {
    "title": {"en": "Kernel lab", "zh": "内核实验室", "es": "Laboratorio de kernels"},
    "intro": {"en": "Run the benchmark harness on this machine's backend: slot mapping (two designs and a torch "
                    "version), the CSR repack, the KV write and the paged decode. Every output is checked against "
                    "the reference before it is timed.",
              "zh": "在本机后端上运行基准测试：槽位映射（两种设计和一个 torch 版本）、CSR 重排、KV 写入和分页解码。"
                    "每个输出在计时之前都先与参考实现核对。",
              "es": "Ejecuta el banco de pruebas en el backend de esta máquina: mapeo de slots (dos diseños y una "
                    "versión en torch), el reempaquetado CSR, la escritura KV y la decodificación paginada. Cada "
                    "salida se comprueba con la referencia antes de medirla."},
    "quick": {"en": "Quick (fewer shapes)", "zh": "快速（较少形状）", "es": "Rápido (menos formas)"},
    "run": {"en": "Run the benchmark", "zh": "运行基准测试", "es": "Ejecutar el banco de pruebas"},
    "running": {"en": "Benchmarking…", "zh": "正在测试……", "es": "Midiendo…"},
    "done": {"en": "Done: {n} measurements on {dev} ({date}).", "zh": "完成：在 {dev} 上测得 {n} 项（{date}）。",
             "es": "Hecho: {n} medidas en {dev} ({date})."},
    "mismatch": {"en": "The benchmark stopped: {msg}", "zh": "基准测试已停止：{msg}", "es": "El banco se detuvo: {msg}"},
    "not_run": {"en": "Press the button to measure on {dev}.", "zh": "点击按钮在 {dev} 上测量。",
                "es": "Pulsa el botón para medir en {dev}."},
    "kernel": {"en": "Kernel", "zh": "内核", "es": "Kernel"},
    "plot": {"en": "{kernel}: time per call by shape", "zh": "{kernel}：各形状的单次调用时间",
             "es": "{kernel}: tiempo por llamada según la forma"},
    "shape": {"en": "shape", "zh": "形状", "es": "forma"},
    "floors": {"en": "Floors: an empty launch takes {e} µs; a device copy runs at {c} GB/s.",
               "zh": "下限：一次空启动耗时 {e} µs；设备内复制速度 {c} GB/s。",
               "es": "Suelos: un lanzamiento vacío tarda {e} µs; una copia en el dispositivo va a {c} GB/s."},
    "goals": {"en": "Speed goals", "zh": "速度目标", "es": "Objetivos de velocidad"},
}
