"""Plotly figure builders for the app (no streamlit here), one module a figure family.

Every figure uses big fonts (it is projected in a classroom) and a hover text that
says exactly what a cell is. A selected token is drawn in every view with the same
highlight (a thick black outline), so one pick lights up the same thing everywhere.
``style`` holds the common look; ``batch``, ``pool``, ``memory`` and ``bytes`` the figures. Every
name is handed on here: callers write ``from kvviz.views import figures`` and ``figures.X``.
"""
from kvviz.views.figures.style import (  # noqa: F401
    BLOCK_PALETTE, FONT, FONT_FAMILY, HILITE, LEGEND_BELOW, LEGEND_LINE_PX, LEGEND_PER_ROW, LEGEND_ROW_PX,
    MAX_CATEGORICAL_BLOCKS, MAX_CUSTOM_CELLS, MAX_TEXT_CELLS, NULL_GRAY, PALETTE, POOL_STATES, _cell_box, _cells,
    _inert, _tr, base_layout, block_color, bracket_below, block_colorscale, cell_box, figure_of, legend_below, legend_px,
    request_color, row_colorscale, wrap_label, wrap_title)
from kvviz.views.figures.batch import (  # noqa: F401
    block_table_heatmap, buffer_selection, slot_buffer_figure, slot_mapping_figure, slot_selection, table_selection)
from kvviz.views.figures.pool import free_queue_figure, ref_count_figure, sharing_figure  # noqa: F401
from kvviz.views.figures.memory import csr_figure, memory_order_figure  # noqa: F401
from kvviz.views.figures.bytes import (  # noqa: F401
    bench_figure, byte_label, byte_ticks, bytes_lines, log_ticks, stacked_bytes)
