"""Debug-dumps page prose in the three languages; the checker's concepts, check titles and
explanations, the injected bugs and the engine faults are in kvviz/texts/checks.py, merged in here.
Technical identifiers (block_table, slot_mapping, check IDs, ...) stay as they are. The per-finding
messages live in kvviz/texts/findings.py."""
from kvviz.texts.checks import CHECK_STRINGS

_PAGE = {
    "title": {"en": "Debug dumps", "zh": "调试转储", "es": "Volcados de depuración"},
    "intro": {"en": "A dump holds the tables of one step: block_table, its device mirror, slot_mapping, the "
                    "FlashInfer page table, ref counts and the free queue. The checker tests every invariant "
                    "and names the **first wrong row**. Capture one from a broken run (`kvviz.dumps.capture`, "
                    "`python -m kvviz check`), or inject a classic bug into the simulator, and compare it "
                    "with a healthy one. Format: docs/dumps.md in the kvviz repository.",
              "zh": "一个转储保存某一步的全部表：block_table 及其设备镜像、slot_mapping、FlashInfer 页表、"
                    "引用计数和空闲队列。检查器逐条检验不变量，并指出**第一个出错的行**。可以从出错的运行中"
                    "采集转储（`kvviz.dumps.capture`、`python -m kvviz check`），也可以向模拟器注入经典 bug，"
                    "再与正常的转储对比。格式见 kvviz 仓库的 docs/dumps.md。",
              "es": "Un volcado guarda las tablas de un paso: block_table, su copia en el dispositivo, "
                    "slot_mapping, la tabla de páginas de FlashInfer, los contadores de referencias y la cola "
                    "libre. El verificador comprueba cada invariante y señala la **primera fila errónea**. "
                    "Captura uno de una ejecución defectuosa (`kvviz.dumps.capture`, `python -m kvviz check`) o "
                    "inyecta un error clásico en el simulador, y compáralo con uno sano. Formato: "
                    "docs/dumps.md del repositorio de kvviz."},
    "source": {"en": "Where the dumps come from", "zh": "转储来源", "es": "Origen de los volcados"},
    "src.bug": {"en": "Inject a bug", "zh": "注入 bug", "es": "Inyectar un error"},
    "src.sim": {"en": "Two simulator steps", "zh": "两个模拟器步骤", "es": "Dos pasos del simulador"},
    "src.examples": {"en": "Example dumps", "zh": "示例转储", "es": "Volcados de ejemplo"},
    "src.upload": {"en": "Upload or paste", "zh": "上传或粘贴", "es": "Subir o pegar"},
    # --- inject a bug
    "bug": {"en": "Bug", "zh": "Bug", "es": "Error"},
    "bug_pair": {"en": "Dump A is the clean step, dump B the same step with the bug; step {step} of the "
                       "simulator's four-request scenario.",
                 "zh": "转储 A 是正常的这一步，转储 B 是注入 bug 后的同一步；取自模拟器四请求场景的第 {step} 步。",
                 "es": "El volcado A es el paso sano y el B el mismo paso con el error; paso {step} del "
                       "escenario de cuatro peticiones del simulador."},
    "name_clean": {"en": "clean", "zh": "正常", "es": "sano"},
    "name_bug": {"en": "with bug: {title}", "zh": "含 bug：{title}", "es": "con error: {title}"},
    # --- two simulator steps
    "scenario": {"en": "Scenario", "zh": "场景", "es": "Escenario"},
    "fault": {"en": "Fault injected into the engine", "zh": "注入引擎的故障", "es": "Fallo inyectado en el motor"},
    "fault.none": {"en": "none (healthy run)", "zh": "无（正常运行）", "es": "ninguno (ejecución sana)"},
    "step_a": {"en": "Step A", "zh": "步骤 A", "es": "Paso A"},
    "step_b": {"en": "Step B", "zh": "步骤 B", "es": "Paso B"},
    "group": {"en": "KV-cache group", "zh": "KV 缓存组", "es": "Grupo de caché KV"},
    "a_healthy": {"en": "Take step A from the same run without the fault",
                  "zh": "步骤 A 取自不含该故障的同一运行",
                  "es": "Tomar el paso A de la misma ejecución sin el fallo"},
    "sim_help": {"en": "The scenario is replayed by the simulator ({n} steps, 0 to {last}); each step's tables "
                       "become a dump (`kvviz.dumps.capture.dump_from_step`). A fault is active from step 0.",
                 "zh": "模拟器重放该场景（共 {n} 步，0 到 {last}）；每一步的表构成一个转储"
                       "（`kvviz.dumps.capture.dump_from_step`）。故障从第 0 步起生效。",
                 "es": "El simulador reproduce el escenario ({n} pasos, de 0 a {last}); las tablas de cada paso "
                       "forman un volcado (`kvviz.dumps.capture.dump_from_step`). El fallo actúa desde el paso 0."},
    "name_step": {"en": "step {i}", "zh": "第 {i} 步", "es": "paso {i}"},
    "name_step_fault": {"en": "step {i}, fault {fault}", "zh": "第 {i} 步，故障 {fault}",
                        "es": "paso {i}, fallo {fault}"},
    "bad_scenario": {"en": "This scenario cannot be replayed: {msg}", "zh": "无法重放该场景：{msg}",
                     "es": "No se puede reproducir este escenario: {msg}"},
    # --- examples and uploads
    "dump_a": {"en": "Dump A", "zh": "转储 A", "es": "Volcado A"},
    "dump_b": {"en": "Dump B", "zh": "转储 B", "es": "Volcado B"},
    "upload": {"en": "Dump {side} (.npz or .json)", "zh": "转储 {side}（.npz 或 .json）",
               "es": "Volcado {side} (.npz o .json)"},
    "paste": {"en": "…or paste dump {side} as JSON", "zh": "……或以 JSON 粘贴转储 {side}",
              "es": "…o pega el volcado {side} como JSON"},
    "paste_cleared": {"en": "The pasted text ({mb} MB) was read and taken out of the box, so that it is not sent "
                            "again on every click.",
                      "zh": "粘贴的文本（{mb} MB）已读取并从输入框中移除，以免每次点击都重新发送。",
                      "es": "El texto pegado ({mb} MB) se leyó y se quitó del cuadro para no reenviarlo en cada clic."},
    "pasted": {"en": "the pasted JSON", "zh": "粘贴的 JSON", "es": "el JSON pegado"},
    "bad_input": {"en": "Dump {side} was not loaded: {msg}.", "zh": "转储 {side} 未能加载：{msg}。",
                  "es": "No se cargó el volcado {side}: {msg}."},
    "colon": {"en": ": ", "zh": "：", "es": ": "},
    "side_name": {"en": "{side}: {name}", "zh": "{side}：{name}", "es": "{side}: {name}"},
    "why.too_big": {"en": "{name} is {size}; the limit is {limit}", "zh": "{name} 大小为 {size}，上限是 {limit}",
                    "es": "{name} ocupa {size}; el límite es {limit}"},
    "why.json_too_big": {"en": "{name} is {size} of JSON; the limit is {limit} (use .npz for big tables)",
                         "zh": "{name} 是 {size} 的 JSON，上限是 {limit}（大表请用 .npz）",
                         "es": "{name} ocupa {size} de JSON; el límite es {limit} (usa .npz para tablas grandes)"},
    "why.lacks": {"en": "{name}: the dump lacks the required key{s} {keys}", "zh": "{name}：转储缺少必需的键 {keys}",
                  "es": "{name}: faltan claves obligatorias en el volcado: {keys}"},
    "why.bad_json": {"en": "{name} is not valid JSON: {what} (line {line}, column {col})",
                     "zh": "{name} 不是有效的 JSON：{what}（第 {line} 行，第 {col} 列）",
                     "es": "{name} no es JSON válido: {what} (línea {line}, columna {col})"},
    "why.not_dump": {"en": "{name} is neither an .npz archive nor UTF-8 JSON", "zh": "{name} 既不是 .npz 归档，也不是 UTF-8 JSON",
                     "es": "{name} no es ni un archivo .npz ni JSON en UTF-8"},
    "why.empty": {"en": "{name} is empty", "zh": "{name} 是空的", "es": "{name} está vacío"},
    "why.not_object": {"en": "{name}: a dump must be a JSON object (or an .npz archive) of named arrays",
                       "zh": "{name}：转储必须是由具名数组组成的 JSON 对象（或 .npz 归档）",
                       "es": "{name}: un volcado debe ser un objeto JSON (o un archivo .npz) de arrays con nombre"},
    "kept_previous": {"en": "The results below are still those of {name}, loaded before.",
                      "zh": "下面的结果仍是之前加载的 {name} 的结果。",
                      "es": "Los resultados de abajo siguen siendo los de {name}, cargado antes."},
    "results_of": {"en": "From {name}, loaded before: {refused} was not loaded.",
                   "zh": "来自之前加载的 {name}：{refused} 未能加载。",
                   "es": "De {name}, cargado antes: {refused} no se cargó."},
    "is_scenario": {"en": "Dump {side} was not loaded: {name} is a kvviz scenario, not a table dump. Open it on the "
                          "Step through page (Your own scenario), or replay it with `kvviz run`.",
                    "zh": "转储 {side} 未能加载：{name} 是 kvviz 场景，不是表转储。请在“逐步执行场景”页（自定义场景）"
                          "打开它，或用 `kvviz run` 重放。",
                    "es": "No se cargó el volcado {side}: {name} es un escenario de kvviz, no un volcado de tablas. "
                          "Ábrelo en la página Escenario paso a paso (Tu propio escenario) o reprodúcelo con "
                          "`kvviz run`."},
    "big_wait": {"en": "Dump {side} is large: this tab reads large inputs at a limited pace, so that other "
                       "users stay fast. Reading it in {s} s.",
                 "zh": "转储 {side} 较大：为保证其他用户的速度，本标签页限制读取大输入的频率。"
                       "{s} 秒后开始读取。",
                 "es": "El volcado {side} es grande: esta pestaña lee las entradas grandes a un ritmo limitado, "
                       "para que los demás usuarios sigan yendo rápido. Se leerá en {s} s."},
    "give_dumps": {"en": "Give one dump to check it, or two to compare them.",
                   "zh": "提供一个转储以检查它，或提供两个转储以对比。",
                   "es": "Da un volcado para verificarlo, o dos para compararlos."},
    "only_one": {"en": "Only one dump is loaded: its findings and tables are shown; add a second one to compare.",
                 "zh": "只加载了一个转储：下面显示它的检查结果和表；再加一个即可对比。",
                 "es": "Solo hay un volcado: se muestran sus hallazgos y tablas; añade otro para comparar."},
    # --- the vLLM release the dumps are checked under (widget key and text keys keep their old names)
    "profile": {"en": "vLLM version to check against", "zh": "按哪个 vLLM 版本检查",
                "es": "Versión de vLLM con la que verificar"},
    "profile.auto": {"en": "each dump's own vllm key (else main)", "zh": "各转储自带的 vllm 键（否则 main）",
                     "es": "la clave vllm de cada volcado (si no, main)"},
    "profile_help": {"en": "Older vLLM releases followed other rules: up to v0.18.1 a vacated row kept its blocks "
                           "(remove_request clears it from v0.19.0, move_row clears its source from v0.27.0), and in "
                           "v0.11.0 an empty row's last_page_len was the page size. A dump may name its release (key "
                           "`vllm`); `kvviz check --vllm VERSION` does the same as this choice.",
                     "zh": "较早的 vLLM 版本遵循不同的规则：v0.18.1 及以前腾出的行保留其块（remove_request 自 v0.19.0 "
                           "起清空它，move_row 自 v0.27.0 起清空源行）；v0.11.0 中空行的 last_page_len 是页大小。"
                           "转储可以写明它的版本（键 `vllm`）；`kvviz check --vllm VERSION` 与这里的选择作用相同。",
                     "es": "Las versiones antiguas de vLLM seguían otras reglas: hasta v0.18.1 una fila vaciada "
                           "conservaba sus bloques (remove_request la limpia desde v0.19.0 y move_row limpia su origen "
                           "desde v0.27.0), y en v0.11.0 el last_page_len de una fila vacía era el tamaño de página. Un "
                           "volcado puede indicar su versión (clave `vllm`); `kvviz check --vllm VERSION` hace lo mismo "
                           "que esta elección."},
    "checked_under": {"en": "Checked under vLLM {profile}.", "zh": "按 vLLM {profile} 检查。",
                      "es": "Verificado con vLLM {profile}."},
    # --- findings
    "findings": {"en": "What the checker finds", "zh": "检查器的发现", "es": "Qué encuentra el verificador"},
    "clean": {"en": "Clean: every check passes ({n} checks apply to this dump).",
              "zh": "正常：所有检查均通过（本转储适用 {n} 项检查）。",
              "es": "Sano: pasan todas las comprobaciones ({n} se aplican a este volcado)."},
    "first_wrong": {"en": "**first wrong row: {row}** (`{check}`): {msg}",
                    "zh": "**第一个出错的行：{row}**（`{check}`）：{msg}",
                    "es": "**primera fila errónea: {row}** (`{check}`): {msg}"},
    "no_row": {"en": "**no row is wrong; first finding** (`{check}`): {msg}",
               "zh": "**没有出错的行；第一条发现**（`{check}`）：{msg}",
               "es": "**ninguna fila errónea; primer hallazgo** (`{check}`): {msg}"},
    "n_findings": {"en": "{n} finding(s) in all, listed by row.", "zh": "共 {n} 条发现，按行排列。",
                   "es": "{n} hallazgo(s) en total, ordenados por fila."},
    "col_check": {"en": "check", "zh": "检查", "es": "comprobación"},
    "col_title": {"en": "what is wrong", "zh": "问题", "es": "qué está mal"},
    "col_row": {"en": "row", "zh": "行", "es": "fila"},
    "col_index": {"en": "index", "zh": "索引", "es": "índice"},
    "col_token": {"en": "token", "zh": "token", "es": "token"},
    "col_concept": {"en": "concept", "zh": "概念", "es": "concepto"},
    "col_message": {"en": "message", "zh": "说明", "es": "mensaje"},
    "findings_cut": {"en": "The first {shown} of {n} findings; the downloads below hold all of them.",
                     "zh": "显示前 {shown} 条发现（共 {n} 条）；下面的下载包含全部。",
                     "es": "Las primeras {shown} de {n} hallazgos; las descargas de abajo los contienen todos."},
    "concept_label": {"en": "Concept broken: {name}", "zh": "被破坏的概念：{name}", "es": "Concepto roto: {name}"},
    "checks_fired": {"en": "Checks that fired:", "zh": "触发的检查：", "es": "Comprobaciones que fallaron:"},
    # --- tables
    "tables": {"en": "Tables side by side", "zh": "并排比较表", "es": "Tablas lado a lado"},
    "all_rows": {"en": "Draw the whole {n} × {w} part", "zh": "绘制完整的 {n} × {w} 部分", "es": "Dibujar toda la parte de {n} × {w}"},
    "all_rows_help": {"en": "By default each table draws {r} rows × {c} columns around the first wrong row (the same "
                            "cells on both sides); the differences below list every cell that differs.",
                      "zh": "默认每张表只绘制第一个出错行附近的 {r} 行 × {c} 列（两边相同的单元格）；下面的差异列表列出所有不同的单元格。",
                      "es": "Por defecto cada tabla dibuja {r} filas × {c} columnas alrededor de la primera fila errónea "
                            "(las mismas celdas en los dos lados); las diferencias de abajo listan cada celda distinta."},
    "window_rows": {"en": "Rows {r0}–{r1}, columns {c0}–{c1} of the {n} × {w} shown, around the first wrong row.",
                    "zh": "显示的 {n} × {w} 中的第 {r0}–{r1} 行、第 {c0}–{c1} 列，位于第一个出错行附近。",
                    "es": "Filas {r0}–{r1}, columnas {c0}–{c1} de las {n} × {w} mostradas, alrededor de la primera fila errónea."},
    "legend": {"en": "Yellow: differs from the other dump. Red: the device mirror differs from the CPU table in a "
                     "live row (stale). Grey: padded rows (\"pad\") and unused rows (\"·\"). ⚠ marks the first "
                     "wrong row. Column n: blocks the row counts (num_blocks_per_row).",
               "zh": "黄色：与另一个转储不同。红色：活跃行中设备镜像与 CPU 表不同（过期）。灰色：填充行（\"pad\"）"
                     "和未使用的行（\"·\"）。⚠ 标出第一个出错的行。n 列：该行计入的块数（num_blocks_per_row）。",
               "es": "Amarillo: difiere del otro volcado. Rojo: la copia del dispositivo difiere de la tabla de CPU "
                     "en una fila viva (obsoleta). Gris: filas de relleno (\"pad\") y filas sin uso (\"·\"). ⚠ "
                     "marca la primera fila errónea. Columna n: bloques que cuenta la fila (num_blocks_per_row)."},
    "table": {"en": "Table", "zh": "表", "es": "Tabla"},
    "table.block_table": {"en": "block_table (CPU, the truth)", "zh": "block_table（CPU，权威值）",
                          "es": "block_table (CPU, la verdad)"},
    "table.block_table_device": {"en": "block_table_device (what the kernel reads)",
                                 "zh": "block_table_device（内核读取的表）",
                                 "es": "block_table_device (lo que lee el kernel)"},
    "rows_caption": {"en": "{live} live row(s) of {rows}, padded to {padded}; {width} columns.",
                     "zh": "{rows} 行中 {live} 行活跃，填充到 {padded} 行；{width} 列。",
                     "es": "{live} fila(s) viva(s) de {rows}, rellenas hasta {padded}; {width} columnas."},
    "stale_rows": {"en": "Stale rows (device ≠ CPU): {rows}.", "zh": "过期行（设备 ≠ CPU）：{rows}。",
                   "es": "Filas obsoletas (dispositivo ≠ CPU): {rows}."},
    "no_table": {"en": "This dump has no such table.", "zh": "该转储没有这张表。", "es": "Este volcado no tiene esa tabla."},
    "shown": {"en": "Showing {r} of {rows} rows and {c} of {w} columns.",
              "zh": "显示 {rows} 行中的 {r} 行、{w} 列中的 {c} 列。",
              "es": "Se muestran {r} de {rows} filas y {c} de {w} columnas."},
    "shown_zero": {"en": "Showing {r} of {rows} rows and {c} of {w} columns; the hidden columns are all 0.",
                   "zh": "显示 {rows} 行中的 {r} 行、{w} 列中的 {c} 列；隐藏的列全为 0。",
                   "es": "Se muestran {r} de {rows} filas y {c} de {w} columnas; las columnas ocultas son todo 0."},
    "col_table": {"en": "table", "zh": "表", "es": "tabla"},
    "col_col": {"en": "column", "zh": "列", "es": "columna"},
    "col_a": {"en": "in A", "zh": "A 中的值", "es": "en A"},
    "col_b": {"en": "in B", "zh": "B 中的值", "es": "en B"},
    "findings_of": {"en": "Findings of {side} ({name})", "zh": "{side}（{name}）的发现",
                    "es": "Hallazgos de {side} ({name})"},
    # --- differences and downloads
    "differences": {"en": "Where the two dumps differ", "zh": "两个转储的差异", "es": "En qué difieren los dos volcados"},
    "equal": {"en": "The two dumps are equal.", "zh": "两个转储完全相同。", "es": "Los dos volcados son iguales."},
    "only_in": {"en": "Only {side} has: {tables}.", "zh": "只有 {side} 含有：{tables}。",
                "es": "Solo {side} tiene: {tables}."},
    "n_diff": {"en": "{n} difference(s): for each table, each differing row and its first differing column "
                     "(row and col empty for a scalar).",
               "zh": "{n} 处差异：每张表中每个不同的行及其第一个不同的列（标量的行和列为空）。",
               "es": "{n} diferencia(s): por cada tabla, cada fila distinta y su primera columna distinta "
                     "(fila y columna vacías para un escalar)."},
    "downloads": {"en": "Downloads", "zh": "下载", "es": "Descargas"},
    "dl_findings_json": {"en": "findings {side} JSON", "zh": "发现 {side} JSON", "es": "hallazgos {side} JSON"},
    "dl_findings_csv": {"en": "findings {side} CSV", "zh": "发现 {side} CSV", "es": "hallazgos {side} CSV"},
    "dl_npz": {"en": "dump {side} .npz", "zh": "转储 {side} .npz", "es": "volcado {side} .npz"},
    "dl_diff": {"en": "differences JSON", "zh": "差异 JSON", "es": "diferencias JSON"},
    "dl_help": {"en": "Findings JSON has the shape of `kvviz check --json`; a .npz dump can be checked again "
                      "with `python -m kvviz check FILE`.",
                "zh": "发现 JSON 的格式与 `kvviz check --json` 相同；.npz 转储可用 `python -m kvviz check FILE` 再次检查。",
                "es": "El JSON de hallazgos tiene la forma de `kvviz check --json`; un volcado .npz se puede "
                      "volver a verificar con `python -m kvviz check FILE`."},
}

STRINGS = {**_PAGE, **CHECK_STRINGS}
