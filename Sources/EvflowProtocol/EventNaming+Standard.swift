import InputModel

extension EventNaming {
    /// The naming the server uses: libevdev's names through InputModel's `EventNames`.
    public static let standard = EventNaming(
        typeName: { EventNames.typeName($0) },
        codeName: { EventNames.codeName(type: $0, code: $1) },
        typeNumber: { EventNames.type(named: $0) },
        codeNumber: { name in EventNames.code(named: name).map { EventCode(type: $0.type, code: $0.code) } },
        maxCode: { EventNames.maxCode(type: $0).map(Int.init) ?? -1 },
        propertyName: { EventNames.propertyName($0) })
}
