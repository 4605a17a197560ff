# logfs/ interval index (DESIGN.md section 5).
